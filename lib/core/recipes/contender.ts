import { randomUUID } from 'node:crypto';
import { CreateMode } from '../zookeeper/zk-client';
import type { ZkConnection } from '../zookeeper/zk-connection';
import { ZkSession, Listing } from '../zookeeper/zk-session';
import {
  ZkCode,
  ZkRequestError,
  isInDoubt,
  isNoNode,
  isNodeExists,
  isSessionGone,
} from '../zookeeper/zk-errors';
import { deleteWithRetry } from './guaranteed-delete';
import type { LockDriver } from './lock-driver';
import { ensureLockPath } from './lock-path';
import { MAX_GENERATION, fencingToken, protectedPrefix } from './lock-naming';
import { pastSequenceGuard, waitForSequenceReset } from './sequence-wrap';

/**
 * How many more answers in doubt recovery takes once nobody waits for the node any more (the
 * caller gave up, or close() ended the wait): then it stops (see keepRecovering).
 */
const DOUBTS_AFTER_WAIT = 2;

export interface ContenderContext {
  readonly connection: ZkConnection;
  /** The recipe's node name and holding rule (mutex, read or write). */
  readonly driver: LockDriver;
  /** Full path of the lock node (namespace applied). */
  readonly lockPath: string;
  readonly nodeData: Buffer;
  /** Our own nodes that held the lock and were released: never waited on again. */
  readonly released: ReadonlySet<string>;
  /** Our position may have changed (became first, or learned our place). */
  onPosition(contender: Contender): void;
  /** Our node disappeared while we still needed it (deleted by someone else). */
  onVanished(contender: Contender): void;
}

type ContenderState = 'new' | 'creating' | 'queued' | 'gone';

/**
 * One EPHEMERAL_SEQUENTIAL node in the lock's queue: created together with the listing (one
 * round trip), recovered by its uuid after a lost create reply, watching only its predecessor,
 * deleted with retries.
 */
export class Contender {
  readonly uuid = randomUUID();
  session?: ZkSession;
  name?: string;
  sequence = -1;
  lockNodeCzxid = 0n;
  private _predecessor: string | null | undefined = undefined;
  private _ahead = 0;
  state: ContenderState = 'new';
  private _holding = false;
  /** How many callers this node has served (the fencing token's low bits). */
  generation = 0;
  private syncing = false;
  private syncAgain = false;
  private selfWatchArmed = false;
  private selfWatchWanted = false;
  /** The answer to the self-watch's getData; selfChecked once it said the node exists. */
  private selfCheck?: Promise<void>;
  private selfChecked = false;
  /** One callback for the self-watch, so re-arming never adds another to the session's watch. */
  private readonly selfWatcher = (event: { name: string }): void => {
    this.selfWatchArmed = false;
    if (event.name === 'NODE_DELETED') this.ownNodeDeleted();
    else if (this.holding ? this.selfWatchWanted : this.state === 'queued') this.armSelfWatch();
  };
  private deletion?: Promise<void>;
  /** Answers in doubt since nobody waits for this node any more (see keepRecovering). */
  private doubtsAfterWait = 0;
  /** Other nodes with our uuid (a create in doubt that committed twice), being deleted. */
  private readonly strays = new Map<string, Promise<void>>();
  /** The watch on the node ahead of ours, while we wait. */
  private predecessorWatch?: { path: string; watcher: (event: { name: string }) => void };

  constructor(private readonly ctx: ContenderContext) {}

  /** undefined: not known yet; null: first in line. Learned from listings and watches only. */
  get predecessor(): string | null | undefined {
    return this._predecessor;
  }

  /** How many nodes ahead keep it from holding (for timeouts' messages and the shortcut). */
  get ahead(): number {
    return this._ahead;
  }

  /** Whether the queue granted the lock on this node (then we watch our own node). */
  get holding(): boolean {
    return this._holding;
  }

  /** The queue granted the lock on this node, or released it. */
  setHolding(holding: boolean): void {
    this._holding = holding;
  }

  /** The waiter gave up (or the session went) while we were busy. */
  get abandoned(): boolean {
    return this.state === 'gone';
  }

  get isFirst(): boolean {
    return this.state === 'queued' && this.predecessor === null;
  }

  /** The server has said, since the last reconnect, that our (holding) node exists. */
  get confirmed(): boolean {
    return this.selfChecked;
  }

  /** Which recipe this node serves (owner scopes keep read, write and mutex holds apart). */
  get kind(): LockDriver['kind'] {
    return this.ctx.driver.kind;
  }

  get nodePath(): string {
    return `${this.ctx.lockPath}/${this.name}`;
  }

  /** Whether this node can serve one more caller (the generation has room). */
  get canServeAgain(): boolean {
    return this.state === 'queued' && this.holding && this.generation < MAX_GENERATION;
  }

  /** The token of the next caller this node serves; generations count up from 0. */
  issueToken(): bigint {
    return fencingToken(this.lockNodeCzxid, this.sequence, this.generation++);
  }

  /** Creates our node and learns our place. Rejects with the session's error if it is lost. */
  async enter(): Promise<void> {
    this.state = 'creating';
    const session = await this.ctx.connection.ready();
    this.session = session;
    // A create whose reply was lost and that recovery did not find: the node may still show up
    // (a lagging member answered the recovery). Then even a waiter that gave up creates once
    // more, to list after it and delete every node with our uuid (docs/design.md §1.5).
    let inDoubt = false;
    for (;;) {
      if (this.abandoned && !inDoubt) return;
      const prefix = `${this.ctx.lockPath}/${this.ctx.driver.nodeNamePrefix(this.uuid)}`;
      // Sent in the same tick: one round trip, and the listing already contains our node. No
      // watch on the lock node (docs/design.md §1): a child watch would notify every node that
      // listed, on every change, including our own delete.
      const created = session.create(prefix, this.ctx.nodeData, CreateMode.EPHEMERAL_SEQUENTIAL);
      const listed = session.getChildren(this.ctx.lockPath);
      listed.catch(() => undefined); // observed below, after the create
      let path: string;
      try {
        path = await created;
      } catch (err) {
        if (isNoNode(err)) {
          if (this.abandoned) return; // the leader had no lock path: no node of ours either
          const wanted = (): boolean => !this.abandoned;
          if (await ensureLockPath(session, this.ctx.lockPath, undefined, wanted)) continue;
          return; // the caller's wait ended while the path's create was in doubt
        }
        // Once the counter sticks at 2^31-1 (ZooKeeper 3.8), a create can clash with a node of
        // that name: the path must be re-created (sequence-wrap.ts).
        if (isNodeExists(err)) {
          if (await this.waitForSequenceReset(session)) continue;
          return;
        }
        if (!isInDoubt(err)) throw err;
        if (!this.keepRecovering() || (await this.recover(session))) return;
        inDoubt = true;
        continue;
      }
      this.adopt(path.slice(path.lastIndexOf('/') + 1));
      if (this.abandoned) {
        // Its batch gave up while it was created. A listing sent after this create was applied
        // shows every earlier node of ours: recovery deletes them all, this one included.
        if (inDoubt) return void (await this.recover(session));
        return this.remove();
      }
      if (pastSequenceGuard(this.sequence)) {
        if (await this.leaveForSequenceReset(session)) continue;
        return;
      }
      try {
        this.apply(await listed);
      } catch (err) {
        if (isSessionGone(err)) throw err;
        await this.resync();
      }
      return;
    }
  }

  /** Re-lists and re-watches (after a predecessor event or a reconnect). */
  async resync(): Promise<void> {
    // A holder (e.g. after a local handoff) no longer needs its place in line.
    if (this.state !== 'queued' || !this.session || this.holding) return;
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    this.syncing = true;
    try {
      do {
        this.syncAgain = false;
        const listing = await this.session.getChildren(this.ctx.lockPath);
        if (this.state !== 'queued') return;
        this.apply(listing);
      } while (this.syncAgain && this.state === 'queued');
    } catch (err) {
      if (isNoNode(err) && this.state === 'queued') this.ctx.onVanished(this);
      // Connection loss: the reconnect handler resyncs; a lost session is handled by its owner.
    } finally {
      this.syncing = false;
    }
  }

  /**
   * Watches our own node while holding: its deletion by anyone else means the lock is lost.
   * One request, so it is armed only once someone can be told (see HeldLock.observe). A node
   * that waited is watched already (see armSelfWatch).
   */
  watchSelf(): void {
    this.selfWatchWanted = true;
    this.armSelfWatch();
  }

  /**
   * Watches our own node (a waiter: always, sent with its predecessor's watch; a holder: see
   * watchSelf). Its answer, and its deletion event, reach us before the event that would make
   * us first (docs/design.md "A waiter's own node").
   */
  private armSelfWatch(): void {
    if (this.selfWatchArmed || this.state !== 'queued' || !this.session) return;
    this.selfWatchArmed = true;
    this.selfCheck = this.session.getData(this.nodePath, this.selfWatcher).then(
      () => {
        this.selfChecked = true;
      },
      (err) => {
        this.selfWatchArmed = false;
        this.selfChecked = false; // no answer (e.g. a timeout on a live socket): ask again
        if (isNoNode(err)) this.ownNodeDeleted();
      },
    );
  }

  /**
   * Resolves once the server has answered the self-watch (armed if needed): before the lock is
   * handed on to the next caller of the batch, our node must be known to exist, or a remote
   * that took the lock after someone deleted it would hold it together with our caller. After
   * the first answer the watch reports a deletion, so this costs nothing from then on.
   */
  confirmSelf(): Promise<void> {
    this.watchSelf();
    return (this.selfChecked ? undefined : this.selfCheck) ?? Promise.resolve();
  }

  /** A reconnect may have dropped in-flight watch requests: arm them again. */
  rearm(): void {
    // Someone may have deleted the node while we were away, and the events the server replays
    // for re-set watches come in no useful order: confirm it again before a batch hands the
    // lock on (LockQueue.pump) or a waiter takes "the node ahead is gone" as its turn.
    this.selfWatchArmed = false;
    this.selfChecked = false;
    if (this.holding) {
      if (this.selfWatchWanted) this.armSelfWatch();
    } else {
      if (this.predecessorWatch) this.armSelfWatch();
      void this.resync();
    }
  }

  /** Deletes our node; retries through connection loss until done or the session is gone. */
  remove(): Promise<void> {
    this.state = 'gone';
    this.unwatchPredecessor();
    const strays = Promise.all(this.strays.values()).then(() => undefined);
    if (!this.name || !this.session) return strays;
    this.deletion ??= Promise.all([
      deleteWithRetry(this.deletingSession(), this.nodePath),
      strays,
    ]).then(() => undefined);
    return this.deletion;
  }

  /**
   * Our session, or the connection's current one once ours was lost: a server that restored the
   * lost session from its log keeps our node until it expires it, and no cleanup of this
   * process would look at the path again (issue #19 §6b). The name carries our uuid, so the node
   * deleted is ours whoever's session it is now.
   */
  private deletingSession(): ZkSession {
    const current = this.ctx.connection.current;
    return this.session && this.session === current ? this.session : current;
  }

  /** Forget the node without deleting it (its session is gone, and the node with it). */
  abandon(): void {
    this.state = 'gone';
    this.unwatchPredecessor();
  }

  /**
   * Our node got a sequence near 2^31: delete it, wait until the path has drained and is
   * re-created (sequence-wrap.ts), then create again. False when the waiter gave up meanwhile.
   */
  private async leaveForSequenceReset(session: ZkSession): Promise<boolean> {
    await deleteWithRetry(session, this.nodePath);
    if (this.abandoned) return false;
    this.name = undefined;
    this.sequence = -1;
    this.state = 'creating';
    return this.waitForSequenceReset(session);
  }

  private async waitForSequenceReset(session: ZkSession): Promise<boolean> {
    await waitForSequenceReset(session, this.ctx.lockPath, {
      wanted: () => !this.abandoned,
      busy: (children) => {
        // Not queued, but busy: a try gives up, a waiter's timeout counts who is ahead.
        this._predecessor = children[children.length - 1];
        this._ahead = children.length;
        this.ctx.onPosition(this);
      },
    });
    this._predecessor = undefined;
    this._ahead = 0;
    return !this.abandoned;
  }

  private adopt(name: string): void {
    this.name = name;
    this.sequence = this.ctx.driver.sequenceOf(name);
    if (this.state === 'creating') this.state = 'queued';
  }

  private apply(listing: Listing): void {
    if (this.state !== 'queued' || !this.name) return;
    this.lockNodeCzxid = listing.czxid;
    const position = this.ctx.driver.position(listing.children, this.name, this.ignored(listing));
    if (!position) return this.ctx.onVanished(this);
    this._predecessor = position.predecessor;
    this._ahead = position.ahead;
    if (position.predecessor !== null) {
      // Sent in this order in one tick: the server answers (and arms) the self-watch first.
      this.armSelfWatch();
      this.watchPredecessor(position.predecessor);
    }
    this.ctx.onPosition(this);
  }

  /**
   * What a listing must not count as a contender: our own released nodes, and any other node
   * with our uuid. A create in doubt can commit twice (the recovery listing may come from a
   * member that has not applied the first yet); that node is ours, so it is deleted here, or we
   * would wait behind it, and everyone behind us, for as long as the session lives.
   */
  private ignored(listing: Listing): ReadonlySet<string> {
    const prefix = protectedPrefix(this.uuid);
    const strays = listing.children.filter((c) => c !== this.name && c.startsWith(prefix));
    if (strays.length === 0) return this.ctx.released;
    for (const stray of strays) this.deleteStray(stray);
    return new Set([...this.ctx.released, ...strays]);
  }

  private deleteStray(name: string): void {
    if (this.strays.has(name) || !this.session) return;
    const deletion = deleteWithRetry(this.session, `${this.ctx.lockPath}/${name}`);
    this.strays.set(name, deletion);
    void deletion.finally(() => this.strays.delete(name));
  }

  private watchPredecessor(predecessor: string): void {
    const session = this.session!;
    const path = `${this.ctx.lockPath}/${predecessor}`;
    if (this.predecessorWatch?.path === path) return; // armed already
    this.unwatchPredecessor();
    const watcher = (event: { name: string }): void => {
      if (this.predecessorWatch?.watcher === watcher) this.predecessorWatch = undefined;
      if (event.name === 'NODE_DELETED') this.predecessorGone(predecessor);
      else void this.resync();
    };
    this.predecessorWatch = { path, watcher };
    session.getData(path, watcher).catch((err) => {
      if (this.predecessorWatch?.watcher === watcher) this.predecessorWatch = undefined;
      if (isNoNode(err)) this.predecessorGone(predecessor);
    });
  }

  /** A waiter that gave up (or moved on) leaves no callback behind on the node it watched. */
  private unwatchPredecessor(): void {
    if (!this.predecessorWatch || !this.session) return;
    this.session.unwatchData(this.predecessorWatch.path, this.predecessorWatch.watcher);
    this.predecessorWatch = undefined;
  }

  /**
   * Sequence numbers only grow, so no node can appear ahead of ours: when the only node ahead
   * is deleted we are first, without listing again (saves a round trip per handoff), provided
   * our own node still exists. The self-watch's answer came before this event (it was sent
   * first), and a deletion of our node before this one would have been reported first, so
   * waiting for that answer costs no round trip (docs/design.md "A waiter's own node").
   */
  private predecessorGone(predecessor: string): void {
    if (this.state !== 'queued' || this.holding || this.predecessor !== predecessor) return;
    if (this.ahead !== 1) return void this.resync();
    const selfCheck = this.selfCheck ?? Promise.resolve();
    void selfCheck.then(() => {
      if (this.state !== 'queued' || this.holding || this.predecessor !== predecessor) return;
      if (!this.selfChecked) return void this.resync(); // unanswered: a listing tells
      this._predecessor = null;
      this._ahead = 0;
      this.ctx.onPosition(this);
    });
  }

  /** Someone else deleted our node: a holder lost its lock, a waiter queues again. */
  private ownNodeDeleted(): void {
    if (this.state === 'queued') this.ctx.onVanished(this);
  }

  /**
   * The create's reply was lost. Find our node by uuid; adopt it only if it belongs to this
   * session, delete it otherwise. Returns true when done (adopted, or given up: see
   * keepRecovering), false to create again. Looks again while its own requests are in doubt
   * too: giving up would leave a node the server may still create, and it would hold the lock
   * for as long as the session lives (docs/design.md §1.5).
   */
  private async recover(session: ZkSession): Promise<boolean> {
    for (;;) {
      if (!(await waitUsable(session))) {
        throw new ZkRequestError(
          ZkCode.SESSION_GONE,
          'create',
          this.ctx.lockPath,
          'session lost during create',
        );
      }
      try {
        return await this.findOwn(session);
      } catch (err) {
        if (isNoNode(err)) return false; // the lock node (or ours) is gone: create again
        if (!isInDoubt(err)) throw err;
        if (!this.keepRecovering()) return true;
      }
    }
  }

  /**
   * Whether recovery of a create in doubt goes on after one more answer in doubt. Always while
   * a caller waits for this node. Once nobody does, DOUBTS_AFTER_WAIT more: enough for a
   * reconnect after a lost reply (the usual case), while a path whose every request makes the
   * server drop the connection (longer than its jute.maxbuffer) no longer reconnects forever,
   * and close() can finish (issue #19 §3). A node it could not find then (if the server created
   * one at all) is ours: it goes with the session at the latest (docs/design.md §1.5).
   */
  private keepRecovering(): boolean {
    return !this.abandoned || ++this.doubtsAfterWait <= DOUBTS_AFTER_WAIT;
  }

  private async findOwn(session: ZkSession): Promise<boolean> {
    const listing = await session.getChildren(this.ctx.lockPath);
    const prefix = protectedPrefix(this.uuid);
    let own: string | undefined;
    // Every node with our uuid is ours: adopt one of this session, delete the others.
    for (const child of listing.children.filter((c) => c.startsWith(prefix))) {
      const path = `${this.ctx.lockPath}/${child}`;
      const owner = await session.getData(path).then(
        ({ stat }) => ZkSession.ownerOf(stat),
        (err) => (isNoNode(err) ? undefined : Promise.reject(err)),
      );
      if (owner === undefined) continue;
      if (owner === session.id && !own) own = child;
      else await deleteWithRetry(session, path);
    }
    if (!own) return false;
    this.adopt(own);
    if (this.abandoned) {
      await this.remove();
      return true;
    }
    this.apply(listing);
    return true;
  }
}

/** Waits until the session is connected again; false if it is lost or closed instead. */
export function waitUsable(session: ZkSession): Promise<boolean> {
  return session.whenUsable();
}
