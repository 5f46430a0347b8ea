// A Contender: one node of ours in a lock's queue, from its create to its delete.
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { Listing, ZkSession } from '../zookeeper/zk-session';
import { isNoNode, isSessionGone } from '../zookeeper/zk-errors';
import { MAX_GENERATION, fencingToken, sequenceOf } from './lock-naming';
import { ProtectedNode } from './protected-node';
import { pastSequenceGuard } from './sequence-wrap';
import { CreateFailures, Next } from './create-failures';
import type { GrantPolicy, Place } from './grant-policy';
import { OwnNodeWatch } from './own-node-watch';
import { PredecessorWatch } from './predecessor-watch';

/** @internal What a Contender needs from its WaiterQueue. */
export interface ContenderContext {
  readonly connection: ZkConnection;
  readonly policy: GrantPolicy;
  /** Full path of the lock node (namespace applied). */
  readonly lockPath: string;
  readonly nodeData: Buffer;
  /** Our own nodes that held the lock and were released: never waited on again. */
  readonly released: ReadonlySet<string>;
  /** Our place may have changed (may hold now, or learned our place). */
  onPosition(contender: Contender): void;
  /** Our node disappeared while we still needed it (deleted by someone else). */
  onVanished(contender: Contender): void;
  /** Our create or first listing went unanswered: no longer placing (see Contender.placing). */
  onPlacingInDoubt(contender: Contender): void;
}

/**
 * Where a contender is, its one state. `creating`: no node yet (again, after backing off at the
 * sequence guard, when `busy` tells who is still queued); `waiting`: queued, its place known once
 * a listing or a watch told; `held`: the queue granted the lock on it; `abandoned`: forgotten
 * without a delete (its session is gone, or someone else deleted it); `removed`: being deleted.
 */
type State =
  | { kind: 'creating'; busy?: Place }
  | { kind: 'waiting'; place?: Place }
  | { kind: 'held' }
  | { kind: 'abandoned' }
  | { kind: 'removed' };

const FIRST: Place = { predecessor: null, ahead: 0 };

/**
 * @internal
 * One EPHEMERAL_SEQUENTIAL node in the lock's queue (Curator's LockInternals loop, on the policy
 * its queue gives): created together with the listing (one round trip), recovered by its uuid
 * after a lost create reply (ProtectedNode, through CreateFailures), watching only the node its
 * policy names (PredecessorWatch), deleted with retries. The queue calls hold() when it grants
 * the lock on it.
 */
export class Contender {
  private state: State = { kind: 'creating' };
  /** Our node, from its first create on (see protectedNode()). */
  private node?: ProtectedNode;
  /** The watch on our own node, from its first use on (see ownWatch). */
  private watch?: OwnNodeWatch;
  private seq = -1;
  private lockNodeCzxid = 0n;
  /** How many callers this node has served (the fencing token's low bits). */
  private generation = 0;
  private syncing = false;
  private syncAgain = false;
  /**
   * enter() is sending the create and the listing that place the node, and neither went
   * unanswered (then finding the node is a wait: docs/design.md "Deadlines").
   */
  private entering = false;
  /** The watch on the node ahead of ours, from its first use on (see predecessorWatch). */
  private aheadWatch?: PredecessorWatch;
  /** What a failed create does next, from the first failure on (see failures). */
  private failed?: CreateFailures;

  constructor(private readonly ctx: ContenderContext) {}

  get session(): ZkSession | undefined {
    return this.node?.session;
  }

  get name(): string | undefined {
    return this.node?.name;
  }

  get nodePath(): string {
    return `${this.ctx.lockPath}/${this.name}`;
  }

  /** The sequence ZooKeeper appended to our node's name (-1 before it is created). */
  get sequence(): number {
    return this.seq;
  }

  /** Which recipe this node serves (owner scopes keep read, write and mutex holds apart). */
  get kind(): GrantPolicy['kind'] {
    return this.ctx.policy.kind;
  }

  /** The node its policy says we wait for: undefined while not known, null when we may hold. */
  get predecessor(): string | null | undefined {
    return this.place?.predecessor;
  }

  /** How many nodes ahead keep it from holding (for timeouts' messages and the shortcut). */
  get ahead(): number {
    return this.place?.ahead ?? 0;
  }

  /** Its policy lets it hold now (or the queue holds on it already). */
  get isFirst(): boolean {
    return this.isHeld || (this.state.kind === 'waiting' && this.state.place?.predecessor === null);
  }

  /** The queue granted the lock on this node (it serves its callers). */
  get isHeld(): boolean {
    return this.state.kind === 'held';
  }

  /** Its caller gave up, or its session went: abandoned or removed. */
  get isGone(): boolean {
    return this.state.kind === 'abandoned' || this.state.kind === 'removed';
  }

  /** Its create and first listing are under way, its place not known yet (enter()). */
  get placing(): boolean {
    return this.entering && !this.isGone && this.place === undefined;
  }

  /** The server has said, since the last reconnect, that our node exists. */
  get confirmed(): boolean {
    return !!this.watch?.confirmed;
  }

  /** Whether this held node can serve one more caller (the generation has room). */
  get canServeAgain(): boolean {
    return this.isHeld && this.generation < MAX_GENERATION;
  }

  /** Creates our node and learns our place. Rejects with the session's error if it is lost. */
  async enter(): Promise<void> {
    this.entering = true;
    try {
      const session = await this.ctx.connection.ready();
      // A create whose reply was lost and that recovery did not find: the node may still show
      // up (a lagging member answered the recovery). Then even a waiter that gave up creates
      // once more, to list after it and delete every node with our uuid (docs/design.md "The
      // mutex recipe").
      let inDoubt = false;
      for (let next: Next = 'create'; next !== 'done';) {
        inDoubt ||= next === 'create-after-doubt';
        next = await this.createAndList(session, inDoubt);
      }
    } finally {
      this.entering = false;
    }
  }

  /** The queue granted the lock on this node. */
  hold(): void {
    this.state = { kind: 'held' };
  }

  /** The token of the next caller this node serves; generations count up from 0. */
  issueToken(): bigint {
    return fencingToken(this.lockNodeCzxid, this.seq, this.generation++);
  }

  /** Re-lists and re-watches (after a predecessor event or a reconnect). */
  async resync(): Promise<void> {
    // A holder (e.g. after a local handoff) no longer needs its place in line.
    if (this.state.kind !== 'waiting') return;
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    this.syncing = true;
    try {
      do {
        this.syncAgain = false;
        const listing = await this.session!.getChildren(this.ctx.lockPath);
        if (!this.queued) return;
        this.apply(listing);
      } while (this.syncAgain && this.queued);
    } catch (err) {
      if (isNoNode(err) && this.queued) this.ctx.onVanished(this);
      // Connection loss: the reconnect handler resyncs; a lost session is handled by its owner.
    } finally {
      this.syncing = false;
    }
  }

  /**
   * Watches our own node while holding: its deletion by anyone else means the lock is lost.
   * One request, so it is armed only once someone can be told (see HeldLock.observe). A node
   * that waited is watched already.
   */
  watchSelf(): void {
    this.ownWatch.want();
  }

  /**
   * Resolves once the server has answered the watch on our node (armed if needed): before the
   * lock is handed on to the next caller of the batch, our node must be known to exist, or a
   * remote that took the lock after someone deleted it would hold it together with our caller.
   */
  confirmSelf(): Promise<void> {
    return this.ownWatch.confirm();
  }

  /** A reconnect may have dropped in-flight watch requests: arm them again. */
  rearm(): void {
    // Someone may have deleted the node while we were away, and the events the server replays
    // for re-set watches come in no useful order: confirm it again before a batch hands the
    // lock on (WaiterQueue) or a waiter takes "the node ahead is gone" as its turn.
    this.watch?.reset();
    if (this.isHeld) return this.watch?.rearm();
    if (this.aheadWatch?.active) this.ownWatch.arm();
    void this.resync();
  }

  /**
   * Deletes our node; retries through connection loss until done or the session is gone. It
   * deletes through the connection's current session: once ours was lost, a server that restored
   * it from its log keeps our node until it expires it, and no cleanup of this process would look
   * at the path again. The name carries our uuid, so the node is ours whoever's
   * session it is now.
   */
  remove(): Promise<void> {
    this.state = { kind: 'removed' };
    this.aheadWatch?.cancel(this.session);
    return this.node?.remove(this.ctx.connection.current) ?? Promise.resolve();
  }

  /** Forget the node without deleting it (its session is gone, and the node with it). */
  abandon(): void {
    this.state = { kind: 'abandoned' };
    this.aheadWatch?.cancel(this.session);
  }

  // ---- enter(), step by step ----------------------------------------------------------------

  /** Our node's protected name, create, recovery and delete; made at its first create. */
  private protectedNode(): ProtectedNode {
    return (this.node ??= new ProtectedNode(
      this.ctx.lockPath,
      this.ctx.policy.nodeName,
      this.ctx.nodeData,
    ));
  }

  /** The watch on our own node, made when first armed or asked. */
  private get ownWatch(): OwnNodeWatch {
    return (this.watch ??= new OwnNodeWatch({
      target: () =>
        this.queued && this.session ? { session: this.session, path: this.nodePath } : undefined,
      rewatch: (wanted) => (this.isHeld ? wanted : this.state.kind === 'waiting'),
      deleted: () => this.ownNodeDeleted(),
    }));
  }

  /** The watch on the node ahead of ours, made when first armed. */
  private get predecessorWatch(): PredecessorWatch {
    return (this.aheadWatch ??= new PredecessorWatch({
      gone: (predecessor) => this.predecessorGone(predecessor),
      changed: () => void this.resync(),
    }));
  }

  /** What a failed create does next, made at the first failure. */
  private get failures(): CreateFailures {
    return (this.failed ??= new CreateFailures({
      lockPath: this.ctx.lockPath,
      node: this.protectedNode(),
      isGone: () => this.isGone,
      adopt: (name) => this.adopt(name),
      apply: (listing) => this.apply(listing),
      remove: () => this.remove(),
      restart: () => {
        this.node?.forget();
        this.seq = -1;
        this.state = { kind: 'creating' };
      },
      busy: (busy) => {
        if (this.state.kind === 'creating') this.state = { kind: 'creating', busy };
        if (busy) this.ctx.onPosition(this);
      },
      inDoubt: () => this.placingInDoubt(),
    }));
  }

  /** Waiting (queued) or held: our node is in the lock's queue. */
  private get queued(): boolean {
    return this.state.kind === 'waiting' || this.state.kind === 'held';
  }

  private get place(): Place | undefined {
    const state = this.state;
    if (state.kind === 'held') return FIRST;
    if (state.kind === 'creating') return state.busy;
    return state.kind === 'waiting' ? state.place : undefined;
  }

  /** One create, sent with the listing that shows its place; what to do next. */
  private async createAndList(session: ZkSession, inDoubt: boolean): Promise<Next> {
    if (this.isGone && !inDoubt) return 'done';
    // Sent in the same tick: one round trip, and the listing already contains our node. No
    // watch on the lock node (docs/design.md "The mutex recipe"): a child watch would notify
    // every node that listed, on every change, including our own delete.
    const created = this.protectedNode().send(session);
    const listed = session.getChildren(this.ctx.lockPath);
    listed.catch(() => undefined); // observed below, after the create
    let name: string;
    try {
      name = await created;
    } catch (err) {
      return this.failures.after(session, err);
    }
    this.adopt(name);
    if (this.isGone) {
      // Its batch gave up while it was created. A listing sent after this create was applied
      // shows every earlier node of ours: recovery deletes them all, this one included.
      await (inDoubt ? this.failures.recover(session) : this.remove());
      return 'done';
    }
    if (pastSequenceGuard(this.seq)) {
      return (await this.failures.leaveForSequenceReset(session)) ? 'create' : 'done';
    }
    try {
      this.apply(await listed);
    } catch (err) {
      if (isSessionGone(err)) throw err;
      this.placingInDoubt();
      await this.resync();
    }
    return 'done';
  }

  /** A request of enter() went unanswered: what follows is a wait, its callers' deadlines count. */
  private placingInDoubt(): void {
    if (!this.entering) return;
    this.entering = false;
    this.ctx.onPlacingInDoubt(this);
  }

  private adopt(name: string): void {
    this.protectedNode().adopt(name);
    this.seq = sequenceOf(name);
    if (this.state.kind === 'creating') this.state = { kind: 'waiting' };
  }

  // ---- our place in line --------------------------------------------------------------------

  private apply(listing: Listing): void {
    if (this.state.kind !== 'waiting' || !this.name) return;
    this.lockNodeCzxid = listing.czxid;
    const place = this.ctx.policy.place(listing.children, this.name, this.ignored(listing));
    if (!place) return this.ctx.onVanished(this);
    this.state = { kind: 'waiting', place };
    if (place.predecessor !== null) {
      // Sent in this order in one tick: the server answers (and arms) the own-node watch first.
      this.ownWatch.arm();
      this.predecessorWatch.watch(this.session!, this.ctx.lockPath, place.predecessor);
    }
    this.ctx.onPosition(this);
  }

  /**
   * What a listing must not count as a contender: our own released nodes, and any other node
   * with our uuid (a create in doubt that committed twice: ProtectedNode deletes it).
   */
  private ignored(listing: Listing): ReadonlySet<string> {
    const strays = this.protectedNode().deleteStrays(listing.children);
    if (strays.length === 0) return this.ctx.released;
    return new Set([...this.ctx.released, ...strays]);
  }

  private waitsFor(predecessor: string): boolean {
    return this.state.kind === 'waiting' && this.state.place?.predecessor === predecessor;
  }

  /**
   * Sequence numbers only grow, so no node can appear ahead of ours: when the only node ahead
   * is deleted we are first, without listing again (saves a round trip per handoff), provided
   * our own node still exists. The own-node watch's answer came before this event (it was sent
   * first), and a deletion of our node before this one would have been reported first, so
   * waiting for that answer costs no round trip (docs/design.md "A waiter's own node").
   */
  private predecessorGone(predecessor: string): void {
    if (!this.waitsFor(predecessor)) return;
    if (this.ahead !== 1) return void this.resync();
    void this.ownWatch.answered().then(() => {
      if (!this.waitsFor(predecessor)) return;
      if (!this.ownWatch.confirmed) return void this.resync(); // unanswered: a listing tells
      this.state = { kind: 'waiting', place: FIRST };
      this.ctx.onPosition(this);
    });
  }

  /** Someone else deleted our node: a holder lost its lock, a waiter queues again. */
  private ownNodeDeleted(): void {
    if (this.queued) this.ctx.onVanished(this);
  }
}
