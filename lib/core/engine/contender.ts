// A Contender: one node of ours in a lock's queue, one loop from its create to its turn.
import type { ZkConnection } from '../zookeeper/zk-connection';
import { isInDoubt, isNoNode, isNodeExists, isSessionGone } from '../zookeeper/zk-errors';
import type { Listing, ZkSession } from '../zookeeper/zk-session';
import {
  MAX_GENERATION,
  fencingToken,
  sequenceOf,
  type LockDriver,
  type Place,
} from './lock-drivers';
import { ensureLockPath, pastSequenceGuard, waitForSequenceReset } from './lock-path';
import { DOUBTS_AFTER_WAIT, ProtectedNode, deleteWithRetry } from './protected-node';

/**
 * Its one state. `creating`: no node yet (again after backing off at the sequence guard, when
 * `busy` says who is still queued); `waiting`: queued, its place known once a listing or a watch
 * told; `held`: the queue holds the lock on it; `abandoned`: forgotten without a delete (its
 * session is gone, or someone else deleted it); `removed`: being deleted.
 */
type State =
  | { kind: 'creating'; busy?: Place }
  | { kind: 'waiting'; place?: Place }
  | { kind: 'held' }
  | { kind: 'abandoned' }
  | { kind: 'removed' };

/** Why the loop woke: list again, the node ahead is gone, or the state changed. */
type Wake = 'list' | { gone: string } | 'state';

type Watcher = (event: { name: string }) => void;

const FIRST: Place = { predecessor: null, ahead: 0 };

/**
 * @internal
 * One EPHEMERAL_SEQUENTIAL node in a lock's queue, for one local caller or a batch of them. Its
 * life is one loop, run(), as Curator's attemptLock and internalLockLoop: create the node (with
 * protection), list the children, ask the driver "may it hold, which node must it watch", watch
 * that node and our own, wait, again, until its queue holds the lock on it (hold()) or gives it
 * up. Its queue hears of a new place or a create in doubt through `changed`, of a node someone
 * else deleted through `vanished`.
 */
export class Contender {
  private state: State = { kind: 'creating' };
  private readonly node: ProtectedNode;
  private seq = -1;
  private lockNodeCzxid = 0n;
  /** Callers this node has served: the fencing token's low bits. */
  private generation = 0;
  /** The create and first listing are under way, none in doubt (docs/design.md "Deadlines"). */
  private entering = false;
  /** Answers in doubt since nobody waits for this node (keepRecovering). */
  private doubtsAfterWait = 0;
  /** Why the loop is to wake, and what wakes it while it sleeps. */
  private wake?: Wake;
  private wakeLoop?: () => void;
  /** The watch on our own node: armed, wanted by a holder, its answer, the node confirmed. */
  private ownArmed = false;
  private ownWanted = false;
  private ownCheck?: Promise<void>;
  private ownConfirmed = false;
  /** The watch on the node ahead of ours, while one is armed. */
  private aheadWatch?: { path: string; watcher: Watcher };

  constructor(
    private readonly connection: ZkConnection,
    private readonly driver: LockDriver,
    /** Full path of the lock node (namespace applied). */
    readonly lockPath: string,
    nodeData: Buffer,
    /** Our own nodes that held the lock and were released: never waited on again. */
    private readonly released: ReadonlySet<string>,
    private readonly changed: (contender: Contender) => void,
    private readonly vanished: (contender: Contender) => void,
  ) {
    this.node = new ProtectedNode(lockPath, driver.nodeName, nodeData);
  }

  get session(): ZkSession | undefined {
    return this.node.session;
  }

  get name(): string | undefined {
    return this.node.name;
  }

  get nodePath(): string {
    return `${this.lockPath}/${this.name}`;
  }

  /** The sequence ZooKeeper appended to our node's name (-1 before it is created). */
  get sequence(): number {
    return this.seq;
  }

  /** The node the driver says we wait for: undefined while not known, null when we may hold. */
  get predecessor(): string | null | undefined {
    return this.place?.predecessor;
  }

  /** How many nodes ahead keep it from holding (timeouts' messages, the shortcut). */
  get ahead(): number {
    return this.place?.ahead ?? 0;
  }

  /** The driver lets it hold now, or its queue holds on it already. */
  get isFirst(): boolean {
    return this.isHeld || (this.state.kind === 'waiting' && this.state.place?.predecessor === null);
  }

  get isHeld(): boolean {
    return this.state.kind === 'held';
  }

  /** Given up by its callers, or its session went. */
  get isGone(): boolean {
    return this.state.kind === 'abandoned' || this.state.kind === 'removed';
  }

  /** Its create and first listing are under way, its place not known yet. */
  get placing(): boolean {
    return this.entering && !this.isGone && this.place === undefined;
  }

  /** The server has said, since the last reconnect, that our node exists. */
  get confirmed(): boolean {
    return this.ownConfirmed;
  }

  /** Held, and its generation has room for one more caller. */
  get canServeAgain(): boolean {
    return this.isHeld && this.generation < MAX_GENERATION;
  }

  /**
   * Creates our node, then lists, asks the driver and waits until its queue holds on it, gives
   * it up or abandons it, or someone else deletes it. Rejects with the session's error when it
   * is lost during the create or the first listing, and with any error a create does not retry.
   */
  async run(): Promise<void> {
    this.entering = true;
    try {
      const session = await this.connection.ready();
      const created = await this.create(session);
      if (created) await this.waitForTurn(session, created.listing);
    } finally {
      this.entering = false;
    }
  }

  /** The queue holds the lock on this node now. */
  hold(): void {
    this.setState({ kind: 'held' });
  }

  /** The token of the next caller this node serves; generations count up from 0. */
  issueToken(): bigint {
    return fencingToken(this.lockNodeCzxid, this.seq, this.generation++);
  }

  /**
   * Watches our own node while holding: its deletion by another client loses the lock. One
   * request, so only once someone can be told (HeldLock.watchForLoss); a node that waited is
   * watched already.
   */
  watchSelf(): void {
    this.ownWanted = true;
    this.armOwn();
  }

  /**
   * Resolves once the server answered the watch on our node: a batch's next caller is served
   * only on a node known to exist, or a remote that took the lock after someone deleted it would
   * hold it too.
   */
  confirmSelf(): Promise<void> {
    this.watchSelf();
    return (this.ownConfirmed ? undefined : this.ownCheck) ?? Promise.resolve();
  }

  /**
   * Our session is back: watches in flight may have been dropped, our node may have been deleted
   * meanwhile, and the events the server replays for re-set watches come in no useful order. So
   * our node is confirmed again before a batch goes on or a waiter takes "the node ahead is gone"
   * as its turn, and a waiter lists again.
   */
  reconnected(): void {
    this.ownArmed = false;
    this.ownConfirmed = false;
    if (this.isHeld) {
      if (this.ownWanted) this.armOwn();
      return;
    }
    if (this.aheadWatch) this.armOwn();
    if (this.state.kind === 'waiting') this.wakeUp('list');
  }

  /**
   * Deletes our node, retried through connection loss, through the connection's current session:
   * a server that restored our lost session from its log keeps the node until it expires it, and
   * its name's uuid makes it ours whoever's session it is now.
   */
  remove(): Promise<void> {
    this.setState({ kind: 'removed' });
    this.unwatchPredecessor();
    return this.node.remove(this.connection.current);
  }

  /** Forgets the node without deleting it (its session is gone, and the node with it). */
  abandon(): void {
    this.setState({ kind: 'abandoned' });
    this.unwatchPredecessor();
  }

  // ---- create ---------------------------------------------------------------------------------

  /**
   * Creates our node with the listing sent in the same tick: one round trip, and the listing
   * shows our node. No watch on the lock node: it would notify every contender on every change
   * (docs/design.md "The mutex recipe"). A missing lock path is created, a sequence near 2^31
   * waits for the path to be re-created, a lost reply finds our node by its uuid. Returns the
   * listing to place the node by (not awaited), or nothing once given up.
   */
  private async create(session: ZkSession): Promise<{ listing: Promise<Listing> } | undefined> {
    // A create in doubt that recovery did not find may still show up (a lagging member answered
    // the recovery): then even a caller that gave up creates once more, to list after it and
    // delete every node with our uuid.
    let inDoubt = false;
    for (;;) {
      if (this.isGone && !inDoubt) return undefined;
      const created = this.node.send(session);
      const listed = session.getChildren(this.lockPath);
      listed.catch(() => undefined); // observed after the create
      let name: string;
      try {
        name = await created;
      } catch (err) {
        if (isNoNode(err)) {
          if (await this.createLockPath(session)) continue;
          return undefined;
        }
        // At 2^31-1 (ZooKeeper 3.8) a create can clash with a node of that name.
        if (isNodeExists(err)) {
          if (await this.waitForSequenceReset(session)) continue;
          return undefined;
        }
        if (!isInDoubt(err)) throw err;
        const keepGoing = this.keepRecovering(); // counted before the wait may end with it
        this.placingInDoubt();
        if (!keepGoing) return undefined;
        const found = await this.recover(session);
        if (found !== 'again') return found && { listing: Promise.resolve(found) };
        inDoubt = true;
        continue;
      }
      this.adopt(name);
      if (this.isGone) {
        // A listing sent after this create shows every earlier node of ours: recovery deletes
        // them all, this one included.
        await (inDoubt ? this.recover(session) : this.remove());
        return undefined;
      }
      if (!pastSequenceGuard(this.seq)) return { listing: listed };
      await deleteWithRetry(session, this.node.path);
      if (this.isGone) return undefined;
      this.node.forget();
      this.seq = -1;
      this.state = { kind: 'creating' };
      if (!(await this.waitForSequenceReset(session))) return undefined;
    }
  }

  /**
   * The create's reply was lost: finds our node by its uuid and takes its place, or deletes it if
   * nobody waits for it. The listing that showed it; 'again' to create again; undefined if done.
   */
  private async recover(session: ZkSession): Promise<Listing | 'again' | undefined> {
    const found = await this.node.recover(session, { keepGoing: () => this.keepRecovering() });
    if (found === 'not-found') return 'again';
    if (found === 'gave-up') return undefined;
    this.adopt(this.node.name!);
    if (!this.isGone) return found;
    await this.remove();
    return undefined;
  }

  /**
   * Whether recovery goes on after one more answer in doubt: always while a caller waits for
   * this node, then DOUBTS_AFTER_WAIT more (protected-node.ts). A node not found then, if the
   * server created one at all, goes with the session.
   */
  private keepRecovering(): boolean {
    return !this.isGone || ++this.doubtsAfterWait <= DOUBTS_AFTER_WAIT;
  }

  /** The lock path is missing: creates it; false if the callers gave up meanwhile. */
  private async createLockPath(session: ZkSession): Promise<boolean> {
    if (this.isGone) return false;
    return ensureLockPath(session, this.lockPath, undefined, {
      keepGoing: () => {
        this.placingInDoubt(); // asked on each create in doubt
        return !this.isGone;
      },
    });
  }

  /**
   * Waits until the lock node is re-created below the sequence guard (lock-path.ts), its place
   * "busy" meanwhile (a try gives up, a timeout counts who is ahead). False if given up.
   */
  private async waitForSequenceReset(session: ZkSession): Promise<boolean> {
    await waitForSequenceReset(
      session,
      this.lockPath,
      () => !this.isGone,
      (children) =>
        this.busy({ predecessor: children[children.length - 1], ahead: children.length }),
    );
    this.busy(undefined);
    return !this.isGone;
  }

  private busy(place: Place | undefined): void {
    if (this.state.kind === 'creating') this.state = { kind: 'creating', busy: place };
    if (place) this.changed(this);
  }

  /** A request of the create went unanswered: what follows is a wait, its deadlines count. */
  private placingInDoubt(): void {
    if (!this.entering) return;
    this.entering = false;
    this.changed(this);
  }

  private adopt(name: string): void {
    this.node.adopt(name);
    this.seq = sequenceOf(name);
    if (this.state.kind === 'creating') this.state = { kind: 'waiting' };
  }

  // ---- the wait -------------------------------------------------------------------------------

  /**
   * Places the node by a listing, watches the node the driver names and our own, sleeps until a
   * watch, a reconnect or the queue wakes it, lists again; until it is no longer waiting. A
   * listing that fails waits for the next wake (a reconnect lists again; a lost session
   * abandons the node).
   */
  private async waitForTurn(session: ZkSession, listed: Promise<Listing>): Promise<void> {
    let listing: Promise<Listing> | undefined = listed;
    for (let first = true; this.state.kind === 'waiting'; first = false) {
      let again = false;
      if (listing) {
        try {
          this.apply(session, await listing);
        } catch (err) {
          if (first && isSessionGone(err)) throw err;
          if (first) {
            this.placingInDoubt(); // and list again at once
            again = true;
          } else if (isNoNode(err)) {
            this.vanish();
          }
        }
        this.entering = false;
      }
      if (!again) {
        const wake = await this.sleep();
        if (this.state.kind !== 'waiting') return;
        again = wake === 'list' || (wake !== 'state' && (await this.turnAfter(wake.gone)));
      }
      listing =
        again && this.state.kind === 'waiting' ? session.getChildren(this.lockPath) : undefined;
    }
  }

  /** Our place by the driver; watches the node it names, and our own. */
  private apply(session: ZkSession, listing: Listing): void {
    if (this.state.kind !== 'waiting' || !this.name) return;
    this.lockNodeCzxid = listing.czxid;
    // Not contenders: our released nodes, and other nodes with our uuid (a create in doubt that
    // committed twice: ProtectedNode deletes them).
    const strays = this.node.deleteStrays(listing.children);
    const ignored = strays.length === 0 ? this.released : new Set([...this.released, ...strays]);
    const place = this.driver.place(listing.children, this.name, ignored);
    if (!place) return this.vanish();
    this.state = { kind: 'waiting', place };
    if (place.predecessor !== null) {
      // Sent in this order in one tick: the server answers (and arms) the own-node watch first.
      this.armOwn();
      this.watchPredecessor(session, place.predecessor);
    }
    this.changed(this);
  }

  /**
   * The node ahead is gone; true to list again. Sequence numbers only grow, so when it was the
   * only node ahead we are first without a listing, once our own node is known to exist: the
   * own-node watch was sent first, so its answer, or our node's deletion, came before this event
   * (docs/design.md "A waiter's own node").
   */
  private async turnAfter(predecessor: string): Promise<boolean> {
    if (!this.waitsFor(predecessor)) return false;
    if (this.ahead !== 1) return true;
    await this.ownCheck;
    if (!this.waitsFor(predecessor)) return false;
    if (!this.ownConfirmed) return true; // unanswered: a listing tells
    this.state = { kind: 'waiting', place: FIRST };
    this.changed(this);
    return false;
  }

  private waitsFor(predecessor: string): boolean {
    return this.state.kind === 'waiting' && this.state.place?.predecessor === predecessor;
  }

  private vanish(): void {
    if (this.queued) this.vanished(this);
  }

  /** Why the loop goes on, at once if it came meanwhile. */
  private async sleep(): Promise<Wake> {
    if (!this.wake) await new Promise<void>((resolve) => (this.wakeLoop = resolve));
    const wake = this.wake!;
    this.wake = undefined;
    return wake;
  }

  /** Wakes the loop; two reasons make one listing. */
  private wakeUp(reason: Wake): void {
    const pending = this.wake;
    this.wake = !pending || pending === 'state' ? reason : reason === 'state' ? pending : 'list';
    const wakeLoop = this.wakeLoop;
    this.wakeLoop = undefined;
    wakeLoop?.();
  }

  private setState(state: State): void {
    this.state = state;
    this.wakeUp('state');
  }

  /** Waiting or held: our node is in the lock's queue. */
  private get queued(): boolean {
    return this.state.kind === 'waiting' || this.state.kind === 'held';
  }

  private get place(): Place | undefined {
    const state = this.state;
    if (state.kind === 'held') return FIRST;
    if (state.kind === 'creating') return state.busy;
    return state.kind === 'waiting' ? state.place : undefined;
  }

  // ---- watches --------------------------------------------------------------------------------

  /**
   * Our own node: a waiter always watches it (with its predecessor's watch), a holder once
   * someone can be told of a loss. One callback, so re-arming adds none to the session's watch.
   */
  private armOwn(): void {
    const session = this.session;
    if (this.ownArmed || !this.queued || !session) return;
    this.ownArmed = true;
    this.ownCheck = session.getData(this.nodePath, this.ownWatcher).then(
      () => {
        this.ownConfirmed = true;
      },
      (err) => {
        this.ownArmed = false;
        this.ownConfirmed = false; // no answer (a timeout on a live socket): asked again
        if (isNoNode(err)) this.vanish();
      },
    );
  }

  private readonly ownWatcher: Watcher = (event) => {
    this.ownArmed = false;
    if (event.name === 'NODE_DELETED') this.vanish();
    else if (this.isHeld ? this.ownWanted : this.state.kind === 'waiting') this.armOwn();
  };

  /**
   * Only the node the driver names is watched, not the lock node: one getData watch at a time,
   * moved when the node ahead changes, removed when we give up, so no callback is left on a node
   * we no longer wait for.
   */
  private watchPredecessor(session: ZkSession, name: string): void {
    const path = `${this.lockPath}/${name}`;
    if (this.aheadWatch?.path === path) return;
    this.unwatchPredecessor();
    const watcher: Watcher = (event) => {
      if (this.aheadWatch?.watcher === watcher) this.aheadWatch = undefined;
      this.wakeUp(event.name === 'NODE_DELETED' ? { gone: name } : 'list');
    };
    this.aheadWatch = { path, watcher };
    session.getData(path, watcher).catch((err) => {
      if (this.aheadWatch?.watcher === watcher) this.aheadWatch = undefined;
      if (isNoNode(err)) this.wakeUp({ gone: name });
    });
  }

  private unwatchPredecessor(): void {
    const session = this.session;
    if (!this.aheadWatch || !session) return;
    session.unwatchData(this.aheadWatch.path, this.aheadWatch.watcher);
    this.aheadWatch = undefined;
  }
}
