// One node of ours in a lock's queue: its loop (Contender) and the fencing tokens it issues, its
// protected node, its lock path.
import type { ZkConnection } from '../zookeeper/zk-connection';
import {
  isSessionGone,
  ZkCode,
  ZkRequestError,
  codeOf,
  isInDoubt,
  isNoNode,
  isNodeExists,
  isNotEmpty,
} from '../zookeeper/zk-errors';
import { type Listing, type NewNode, ZkSession } from '../zookeeper/zk-session';
import { sequenceOf, type LockDriver, type Place, sortContenders } from './lock-drivers';
import { randomUUID } from 'node:crypto';
import { UnexpectedAclError, LockAccessDeniedError } from '../errors';
import { CONTAINER } from '../zookeeper/jute';
import type { AclEntry } from '../zookeeper/zk-client';
import { CreateMode, type Stat } from '../zookeeper/zk-client';
import { parentPath } from '../paths';

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

/** The callers one node serves in turn are numbered in the fencing token's low 32 bits. */
export const MAX_GENERATION = 0xffff_ffff;

/**
 * Fencing token = (lock node czxid << 64) | (sequence << 32) | generation (docs/design.md
 * "Fencing tokens"): it grows across holders' nodes, re-created lock nodes and a node's callers.
 * The listing's Stat gives the czxid: no extra request.
 */
export function fencingToken(lockNodeCzxid: bigint, sequence: number, generation = 0): bigint {
  if (generation < 0 || generation > MAX_GENERATION) {
    throw new RangeError(`fencing generation ${generation} is outside 0..${MAX_GENERATION}`);
  }
  return (lockNodeCzxid << 64n) | (BigInt(sequence >>> 0) << 32n) | BigInt(generation);
}

/** A token as 39 zero-padded digits: text order equals numeric order (for TEXT columns). */
export function fencingTokenText(token: bigint): string {
  return token.toString().padStart(39, '0');
}

/**
 * @internal
 * One node in a lock's queue, for one caller or a batch. Its life is one loop, run(), as Curator's
 * internalLockLoop: create (protected), list, ask the driver whom to watch, watch, wait, again.
 * The queue hears of a new place or a create in doubt through `changed`, of a deletion through
 * `vanished`.
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

  /**
   * First by the driver (or held already), on a connected session heard from within the safe
   * window: while disconnected ownership is unknown, and a process that woke from a pause may
   * hold an expired session (docs/design.md "What holding means, and when it ends").
   */
  mayHold(): boolean {
    return this.isFirst && !!this.session?.checkProvenAlive();
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
   * Creates our node and waits until its queue holds on it, gives it up, or it is deleted. Rejects
   * with the session's error if lost during the create or first listing, or a create's fatal error.
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

  /**
   * Holds for the next caller (or readers) this node serves: their fencing token, a new
   * generation each time, and the session the node lives in, which the hold keeps for its life.
   */
  hold(): { token: bigint; session: ZkSession } {
    const token = fencingToken(this.lockNodeCzxid, this.seq, this.generation++);
    this.setState({ kind: 'held' });
    return { token, session: this.session! };
  }

  /**
   * Watches our own node while holding: its deletion by another client loses the lock. Armed only
   * once someone can be told (HeldLock.watchForLoss); a node that waited is watched already.
   */
  watchSelf(): void {
    this.ownWanted = true;
    this.armOwn();
  }

  /**
   * Resolves once the server answered the watch on our node: a batch serves its next caller only on
   * a node known to exist, or a remote that took the lock after a deletion would hold it too.
   */
  confirmSelf(): Promise<void> {
    this.watchSelf();
    return (this.ownConfirmed ? undefined : this.ownCheck) ?? Promise.resolve();
  }

  /**
   * Our session is back: watches in flight may be dropped, our node deleted, and replayed events
   * come in no useful order. So our node is confirmed again before a batch goes on or a waiter
   * takes "the node ahead is gone" as its turn, and a waiter lists again.
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
   * Deletes our node through the connection's current session, retried through connection loss:
   * a restored session keeps the node, and its name's uuid makes it ours whoever's session it is.
   */
  remove(): Promise<void> {
    this.setState({ kind: 'removed' });
    this.unwatchPredecessor();
    // Our own deletion needs no news of itself: no callback outlives the node.
    if (this.name) this.session?.unwatchData(this.nodePath, this.ownWatcher);
    this.ownArmed = false;
    return this.node.remove(this.connection.current);
  }

  /** Forgets the node without deleting it (its session is gone, and the node with it). */
  abandon(): void {
    this.setState({ kind: 'abandoned' });
    this.unwatchPredecessor();
  }

  // ---- create ---------------------------------------------------------------------------------

  /**
   * Creates our node and lists in the same tick (one round trip, no watch on the lock node,
   * docs/design.md "The mutex recipe"): a missing path is created, a sequence near 2^31 waits for
   * a new path, a lost reply finds our node by its uuid. The listing, or nothing once given up.
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
        if (this.node.createAgain(err)) continue; // with (more of) the lock path, or none
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

  /** A lost create reply: adopts our node found by uuid, or deletes it if nobody waits for it. */
  private async recover(session: ZkSession): Promise<Listing | 'again' | undefined> {
    const found = await this.node.recover(session, { keepGoing: () => this.keepRecovering() });
    if (found === 'not-found') return 'again';
    if (found === 'gave-up') return undefined;
    this.adopt(this.node.name!);
    if (!this.isGone) return found;
    await this.remove();
    return undefined;
  }

  /** Recovery goes on while a caller waits for this node, then for DOUBTS_AFTER_WAIT answers. */
  private keepRecovering(): boolean {
    return !this.isGone || ++this.doubtsAfterWait <= DOUBTS_AFTER_WAIT;
  }

  /** Waits for a lock node below SEQUENCE_GUARD, its place "busy" meanwhile; false if given up. */
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
   * While waiting: places the node by a listing, watches the node the driver names and our own,
   * sleeps until a watch, a reconnect or the queue wakes it, lists again. A failed listing waits
   * for the next wake (a reconnect lists again; a lost session abandons the node).
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
   * The node ahead is gone; true to list again. Sequences only grow, so if it was the only node
   * ahead we are first without a listing once our node is known to exist: the own-node watch was
   * sent first, so its answer or our deletion came first (docs/design.md "A waiter's own node").
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
   * Watches only the node the driver names, not the lock node: one getData watch, moved when the
   * node ahead changes and removed on giving up, so no callback outlives the wait.
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

/**
 * Deletes `path`, retrying through connection loss until done or the session is gone: an orphan
 * node would block every later caller until the session ends (docs/design.md "The mutex recipe").
 */
export async function deleteWithRetry(session: ZkSession, path: string): Promise<void> {
  for (;;) {
    try {
      await session.remove(path);
      return;
    } catch (err) {
      if (isNoNode(err) || isSessionGone(err) || !isInDoubt(err)) return;
      if (!(await session.whenUsable())) return;
    }
  }
}

/** Prefix of every node one attempt creates; the uuid finds it again after a lost reply. */
function protectedPrefix(uuid: string): string {
  return `_c_${uuid}-`;
}

/** @internal The children that one attempt with this uuid created (by its protected prefix). */
export function ownNodes(children: readonly string[], uuid: string): string[] {
  const prefix = protectedPrefix(uuid);
  return children.filter((c) => c.startsWith(prefix));
}

/**
 * @internal
 * Answers in doubt recovery still takes once nobody waits for the node: enough for a reconnect
 * after a lost reply, while a path the server drops the connection for (longer than its
 * jute.maxbuffer) does not reconnect forever. A node not found by then goes with the session.
 */
export const DOUBTS_AFTER_WAIT = 2;

/**
 * @internal
 * One EPHEMERAL_SEQUENTIAL node `<dir>/_c_<uuid>-<baseName><seq>`, as Curator's withProtection()
 * (docs/design.md "The mutex recipe"): after a lost reply the uuid finds it; the current session's
 * is adopted, every other deleted (a create in doubt can commit twice). Contenders and leases.
 */
export class ProtectedNode {
  readonly uuid = randomUUID();
  private ownName?: string;
  private ownSession?: ZkSession;
  private deletion?: Promise<void>;
  /** Other nodes with our uuid (a create in doubt that committed twice), being deleted. */
  private readonly strays = new Map<string, Promise<void>>();
  /** How many nodes of the lock path, `dir` up, the next create makes with ours (createAgain). */
  private pathLevels = 0;

  constructor(
    readonly dir: string,
    private readonly baseName: string,
    private readonly data: Buffer,
  ) {}

  /** Our node's name once created (or adopted); undefined before. */
  get name(): string | undefined {
    return this.ownName;
  }

  /** The session the node was created in. */
  get session(): ZkSession | undefined {
    return this.ownSession;
  }

  get path(): string {
    return `${this.dir}/${this.ownName}`;
  }

  /**
   * Sends just the create (a listing in the same tick shares the trip); the name to adopt. Once
   * createAgain() found the lock path missing, its missing nodes (`dir` with `dirData`) are made
   * in the same transaction as ours: a process that dies in between leaves no container that
   * never had a child, which the server would keep (docs/design.md "Cleanup").
   */
  send(session: ZkSession, dirData?: Buffer): Promise<string> {
    this.ownSession = session;
    const prefix = `${this.dir}/${protectedPrefix(this.uuid)}${this.baseName}`;
    const mode = CreateMode.EPHEMERAL_SEQUENTIAL;
    const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
    if (this.pathLevels > 0) {
      // We make `dir` here, with our ACL: nothing to check.
      const parents = lockPathNodes(this.dir, this.pathLevels, session.namespace, dirData);
      return session.createWithParents(parents, prefix, this.data, mode).then(nameOf);
    }
    // With acl: 'creator', the directory's ACL is read in the same write, ahead of the create:
    // its answer comes first, so checking it costs the server one request and no round trip.
    const acl = session.checksAcl ? session.getAcl(this.dir).catch(() => undefined) : undefined;
    const created = session.create(prefix, this.data, mode).then(nameOf);
    if (!acl) return created;
    return created.then(async (name) => {
      await this.checkDir(session, [name], await acl);
      return name;
    });
  }

  /**
   * Whether a create that failed with `err` is sent again: with one more node of the lock path
   * (NONODE: `dir` or an ancestor is missing), or with none (NODEEXISTS while making them: made
   * meanwhile). Not for NONODE below the root (a missing chroot node).
   */
  createAgain(err: unknown): boolean {
    if (isNoNode(err) && this.pathLevels < this.dir.split('/').length - 1) {
      this.pathLevels++;
      return true;
    }
    if (!isNodeExists(err) || this.pathLevels === 0) return false;
    this.pathLevels = 0;
    return true;
  }

  /**
   * With acl: 'creator', a directory whose ACL lets other identities in (docs/guides/security.md)
   * keeps nothing of ours: `names` are deleted, then UnexpectedAclError. `read`: the ACL read with
   * the create; undefined when that read failed (directory created meanwhile, or answer lost).
   */
  private async checkDir(
    session: ZkSession,
    names: readonly string[],
    read?: readonly AclEntry[],
  ): Promise<void> {
    try {
      session.checkAcl(this.dir, read ?? (await session.getAcl(this.dir)));
    } catch (err) {
      if (err instanceof UnexpectedAclError) {
        await Promise.all(names.map((name) => deleteWithRetry(session, `${this.dir}/${name}`)));
      }
      throw err;
    }
  }

  /** Our node, created or found: the next create makes none of the lock path. */
  adopt(name: string): void {
    this.ownName = name;
    this.pathLevels = 0;
  }

  /** Forgets our node's name (deleted by us, to be created anew, from none of the lock path). */
  forget(): void {
    this.ownName = undefined;
    this.deletion = undefined;
    this.pathLevels = 0;
  }

  /**
   * Creates the node (again, if deleted under us), `dir` with `dirData` if missing; finds it after
   * a lost reply (see recover). No name afterwards: recovery gave up and no node was found.
   */
  async create(session: ZkSession, dirData?: Buffer, recovery: Recovery = {}): Promise<void> {
    this.forget();
    for (;;) {
      try {
        return this.adopt(await this.send(session, dirData));
      } catch (err) {
        if (this.createAgain(err)) continue;
        if (!isInDoubt(err)) throw err;
        if ((await this.recover(session, recovery)) !== 'not-found') return;
      }
    }
  }

  /**
   * A lost create reply: finds our node by uuid once the session is usable; looks again while in
   * doubt, as a node the server may still create would hold the lock for the session's life
   * (docs/design.md "The mutex recipe"). Rejects with SESSION_GONE.
   */
  async recover(
    session: ZkSession,
    recovery: Recovery = {},
  ): Promise<Listing | 'not-found' | 'gave-up'> {
    const { keepGoing, usable } = withDefaults(recovery);
    for (;;) {
      if (!(await usable(session))) {
        throw sessionLostDuringCreate(this.dir);
      }
      try {
        return await this.findOwn(session);
      } catch (err) {
        if (isNoNode(err)) return 'not-found'; // the directory (or our node) is gone
        if (!isInDoubt(err)) throw err;
        if (!keepGoing()) return 'gave-up';
      }
    }
  }

  /** Deletes our uuid's other nodes (a doubled create), or we would wait behind our own. */
  deleteStrays(children: readonly string[]): string[] {
    const strays = ownNodes(children, this.uuid).filter((c) => c !== this.ownName);
    for (const name of strays) {
      if (this.strays.has(name) || !this.ownSession) continue;
      const deletion = deleteWithRetry(this.ownSession, `${this.dir}/${name}`);
      this.strays.set(name, deletion);
      void deletion.finally(() => this.strays.delete(name));
    }
    return strays;
  }

  /** Deletes the node and any strays through `session` (default its own), as deleteWithRetry. */
  remove(session = this.ownSession): Promise<void> {
    // Without strays (nearly always), no promises to join: the delete's own.
    const strays =
      this.strays.size === 0 ? undefined : Promise.all(this.strays.values()).then(() => undefined);
    if (!this.ownName || !session) return strays ?? Promise.resolve();
    this.deletion ??= strays
      ? Promise.all([deleteWithRetry(session, this.path), strays]).then(() => undefined)
      : deleteWithRetry(session, this.path);
    return this.deletion;
  }

  /** Lists `dir`: adopts our node of `session`, deletes the others with our uuid. */
  private async findOwn(session: ZkSession): Promise<Listing | 'not-found'> {
    const listing = await session.getChildren(this.dir);
    if (session.checksAcl) await this.checkDir(session, ownNodes(listing.children, this.uuid));
    let own: string | undefined;
    for (const child of ownNodes(listing.children, this.uuid)) {
      const path = `${this.dir}/${child}`;
      const owner = await session.getData(path).then(
        ({ stat }) => ZkSession.ownerOf(stat),
        (err) => (isNoNode(err) ? undefined : Promise.reject(err)),
      );
      if (owner === undefined) continue;
      if (owner === session.id && !own) own = child;
      else await deleteWithRetry(session, path);
    }
    if (!own) return 'not-found';
    this.adopt(own);
    return listing;
  }
}

/**
 * Data of every node this library creates as (part of) a lock path. Cleanup removes only such
 * nodes: a template value can name any node (`/app/{name}` with name=config), and one someone else
 * created or wrote to is not ours to delete (docs/design.md "The mutex recipe").
 */
export const LOCK_PATH_DATA = Buffer.from('nestjs-zookeeper-lock');

/**
 * A semaphore's maxLeases, recorded as the data of `<path>/leases` (docs/design.md "The lock
 * family"): Curator's InterProcessSemaphoreV2 never reads it. It binds only while leases exist.
 */
const RECORD = /^nestjs-zookeeper-lock maxLeases=(\d+)$/;

export function limitRecord(maxLeases: number): Buffer {
  return Buffer.from(`nestjs-zookeeper-lock maxLeases=${maxLeases}`);
}

/** The limit a leases node records, if it holds our record. */
export function recordedLimit(data: Buffer | null): number | undefined {
  const match = data && RECORD.exec(data.toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/** A CONTAINER node's ephemeralOwner (Long.MIN_VALUE), as ZkSession.ownerOf shows it. */
const CONTAINER_OWNER = '8000000000000000';

/**
 * A container (or persistent, as older releases made lock paths) node with our marker as its
 * data: created as a lock path, written by nobody since but a semaphore's acquirers (the leases
 * node records their maxLeases, see recipes/semaphore.ts).
 */
export function isOwnLockPath(data: Buffer | null, stat: Stat): boolean {
  const owner = ZkSession.ownerOf(stat);
  if ((owner !== '0' && owner !== CONTAINER_OWNER) || !data) return false;
  return data.equals(LOCK_PATH_DATA) || recordedLimit(data) !== undefined;
}

/** @internal `path` is `namespace` or above: persistent, never removed, whatever its data. */
export function isNamespace(path: string, namespace: string | undefined): boolean {
  return !!namespace && (namespace === path || namespace.startsWith(path + '/'));
}

/** @internal How a request in doubt is asked again: while `keepGoing()`, once `usable()`. */
export interface Recovery {
  keepGoing?: () => boolean;
  usable?: (session: ZkSession) => Promise<boolean>;
}

function sessionLostDuringCreate(path: string): ZkRequestError {
  return new ZkRequestError(ZkCode.SESSION_GONE, 'create', path, 'session lost during create');
}

/** @internal `recovery` with its defaults filled in. */
export function withDefaults(recovery: Recovery): Required<Recovery> {
  const { keepGoing = () => true, usable = (s: ZkSession) => s.whenUsable() } = recovery;
  return { keepGoing, usable };
}

/**
 * The `levels` lowest nodes of lock path `dir`, itself included, top down, as made with a node in
 * it: CONTAINERs with our marker (`dir` with `dirData`), which the server deletes once emptied;
 * the namespace and above persistent and unmarked, never removed.
 */
function lockPathNodes(
  dir: string,
  levels: number,
  namespace: string | undefined,
  dirData: Buffer = LOCK_PATH_DATA,
): NewNode[] {
  const nodes: NewNode[] = [];
  for (let path = dir; nodes.length < levels; path = parentPath(path)) {
    const outsideLocks = isNamespace(path, namespace);
    const data = outsideLocks ? null : path === dir ? dirData : LOCK_PATH_DATA;
    nodes.unshift({ path, data, mode: outsideLocks ? CreateMode.PERSISTENT : CONTAINER });
  }
  return nodes;
}

/**
 * @internal
 * Creates the namespace and its missing ancestors, persistent and unmarked, never removed. A
 * create in doubt is sent again once the session is usable; rejects with SESSION_GONE.
 */
export async function ensureNamespace(session: ZkSession, namespace: string): Promise<void> {
  for (;;) {
    try {
      await session.create(namespace, null, CreateMode.PERSISTENT);
      return;
    } catch (err) {
      if (isNodeExists(err)) return;
      if (isNoNode(err) && parentPath(namespace) !== '/') {
        await ensureNamespace(session, parentPath(namespace));
        continue;
      }
      if (!isInDoubt(err)) throw err;
      if (!(await session.whenUsable())) throw sessionLostDuringCreate(namespace);
    }
  }
}

/**
 * Removes an idle lock path node if it is ours (see isOwnLockPath) and has no children, with the
 * version just read, so a node changed meanwhile stays. 'kept': in use, or changed meanwhile;
 * 'foreign': not created as a lock path by this library; 'retry': connection trouble.
 */
export async function removeIdleLockPath(
  session: ZkSession,
  path: string,
): Promise<'gone' | 'kept' | 'foreign' | 'retry'> {
  try {
    const { data, stat } = await session.getData(path);
    if (!isOwnLockPath(data, stat)) return 'foreign';
    if (stat.numChildren > 0) return 'kept';
    await session.remove(path, stat.version);
    return 'gone';
  } catch (err) {
    if (isNoNode(err)) return 'gone';
    if (isNotEmpty(err) || codeOf(err) === ZkCode.BAD_VERSION) return 'kept'; // in use, or changed
    if (err instanceof LockAccessDeniedError) return 'foreign'; // its ACL refuses us: never retried
    return 'retry';
  }
}

/**
 * The sequence suffix is the parent's signed 32-bit create counter; past 2^31-1 ordering, the
 * "one node ahead" shortcut and fencing tokens break. A node at or past this guard is deleted, its
 * waiters wait for the path to drain, and the lock node is created anew (counter 0, larger czxid:
 * tokens keep growing); 2^20 covers creates meanwhile (docs/design.md "The mutex recipe").
 */
export const SEQUENCE_GUARD = 2 ** 31 - 2 ** 20;

/** How often a waiter backed off at the guard looks whether the path has drained. */
const DRAIN_POLL_MS = 200;

/**
 * The sequence the lock node's next child gets: its Stat shows cversion = 2 * counter -
 * numChildren (a 32-bit int, so it wraps long before the counter does).
 */
export function nextSequence(listing: Listing): number {
  return ((listing.cversion >>> 0) + listing.children.length) / 2; // 2^31 exactly reads as 0
}

/** Whether a node got a sequence at or past the guard (-1: one that did not parse, wrapped). */
export function pastSequenceGuard(sequence: number): boolean {
  return sequence < 0 || sequence >= SEQUENCE_GUARD;
}

/**
 * Waits until the lock node has drained and is re-created (by anyone) or gone, so a create starts
 * from counter 0; stops once `wanted()` is false; tells `busy` who is still queued, in lock order.
 * Rejects with the session's error, or LockAccessDeniedError if the node is not ours to delete.
 */
export async function waitForSequenceReset(
  session: ZkSession,
  lockPath: string,
  wanted: () => boolean,
  busy: (children: string[]) => void,
): Promise<void> {
  while (wanted()) {
    const step = await resetStep(session, lockPath);
    if (step === 'done') return;
    if (step !== 'again') busy(step);
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
  }
}

async function resetStep(
  session: ZkSession,
  lockPath: string,
): Promise<'done' | 'again' | string[]> {
  let listing;
  try {
    listing = await session.getChildren(lockPath);
  } catch (err) {
    if (isNoNode(err)) return 'done'; // removed meanwhile: create it anew
    if (isInDoubt(err)) return 'again';
    throw err;
  }
  if (listing.children.length > 0) {
    if (nextSequence(listing) < SEQUENCE_GUARD) return 'done'; // re-created meanwhile
    return sortContenders(listing.children);
  }
  // Empty: delete it. (An empty node whose counter just wrapped shows the same Stat as a new
  // one, so an empty node is always deleted, at worst once more than needed.)
  const outcome = await removeIdleLockPath(session, lockPath);
  if (outcome === 'foreign') {
    // The server's state, not the caller's path, is at fault: a misconfiguration as a refusing
    // ACL is (500, and nothing of the path or the namespace in the answer), not a 400.
    throw new LockAccessDeniedError(
      lockPath,
      'delete and re-create',
      `Refusing to delete and re-create lock path "${lockPath}": its sequence counter is near ` +
        "ZooKeeper's limit of 2^31, and this library did not create it as a lock path (or its " +
        "ACL refuses this client's identity), so nobody can queue on it. Delete it while nobody " +
        'uses it (zkCli: deleteall <path>), or lock another path.',
    );
  }
  return outcome === 'gone' ? 'done' : 'again';
}
