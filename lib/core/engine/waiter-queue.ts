// A client's local queues: callers batched onto contender nodes by lock path; the path reaper;
// what callers are told.
import {
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  type LockQueueAhead,
  LockModeError,
  LockQueueFullError,
  InvalidLockPathError,
  ZkLockError,
  ZooKeeperUnavailableError,
  InvalidLockOptionsError,
} from '../errors';
import type { ZkConnection } from '../zookeeper/zk-connection';
import { ZkCode, codeOf, isInDoubt, isSessionGone } from '../zookeeper/zk-errors';
import type { ZkSession } from '../zookeeper/zk-session';
import { Contender, isNamespace, removeIdleLockPath } from './contender';
import { HeldLock } from './held-lock';
import { type LockDriver, DRIVERS, type LockKind } from './lock-drivers';
import type { AcquireOptions, WaitOutcome } from '../types';
import { sessionIndexOf } from '../zookeeper/zk-connection';
import { parentPath } from '../paths';

type PathQueues = Partial<Record<LockKind, WaiterQueue>>;
const KINDS = Object.keys(DRIVERS) as LockKind[];

/** @internal The client's caps on waiting callers (options of the same names). */
export interface WaiterCaps {
  readonly maxWaitersPerPath: number;
  readonly maxWaiters: number;
}

/**
 * @internal
 * The client's local queues, by lock path. A path is a mutex or a read/write lock in a process
 * (mixing would not exclude: LockModeError). A caller past the caps is refused before anything
 * is queued or sent; an idle path goes to the reaper.
 */
export class LockQueues {
  private readonly byPath = new Map<string, PathQueues>();
  /** Callers waiting in all the queues (WaiterQueue.waiting, summed as they change). */
  private waiting = 0;

  constructor(
    /** Per pool session, in member order; a path's queues use its session's (sessionIndexOf). */
    private readonly contexts: readonly QueueContext[],
    private readonly reaper: ParentReaper,
    private readonly caps: WaiterCaps,
  ) {
    reaper.keepWhile((lockPath) => this.byPath.has(lockPath));
  }

  /**
   * Hands one acquire (or a `'try'`) of `kind` on `lockPath` to its queue, created on first use;
   * once the queue takes the caller, the path is no longer due for cleanup. Throws LockModeError
   * on mixing, LockQueueFullError for a caller that would wait beyond the caps, before any of that.
   */
  acquire(
    lockPath: string,
    path: string,
    kind: LockKind,
    request: AcquireOptions | 'try',
  ): Promise<HeldLock | null> {
    // A try, waitTimeoutMs 0 and a signal aborted already never wait: never refused.
    const waits = request !== 'try' && request.waitTimeoutMs !== 0 && !request.signal?.aborted;
    if (waits && this.waiting >= this.caps.maxWaiters) {
      throw new LockQueueFullError(path, 'maxWaiters', this.caps.maxWaiters);
    }
    let entry = this.byPath.get(lockPath);
    if (!entry) this.byPath.set(lockPath, (entry = {}));
    const mutex = kind === 'mutex';
    if (mutex ? entry.read || entry.write : entry.mutex) {
      throw new LockModeError(
        path,
        mutex
          ? 'this process uses it as a read/write lock, and a mutex would not exclude its readers or writers'
          : 'this process uses it as a mutex, and a read/write lock would not exclude its holder',
        'Use one kind of lock per path, in every process',
      );
    }
    const onPath = KINDS.reduce((sum, k) => sum + (entry[k]?.waiting ?? 0), 0);
    if (waits && onPath >= this.caps.maxWaitersPerPath) {
      throw new LockQueueFullError(path, 'maxWaitersPerPath', this.caps.maxWaitersPerPath);
    }
    // Created and asked in one go: the queue's code runs from its constructor on.
    const queue = (entry[kind] ??= new WaiterQueue(
      this.contexts[sessionIndexOf(lockPath, this.contexts.length)],
      (q) => this.idle(q, kind),
      lockPath,
      path,
      DRIVERS[kind],
      (change) => (this.waiting += change),
    ));
    const granted = request === 'try' ? queue.tryAcquire() : queue.acquire(request);
    // A caller refused at once (its signal aborted already, a try without a session) sent nothing
    // and leaves the path as it found it: no queue kept, a cleanup due still due.
    if (queue.idle) this.forget(queue, kind);
    else this.reaper.cancel(lockPath);
    return granted;
  }

  all(): WaiterQueue[] {
    return [...this.byPath.values()].flatMap((entry) =>
      KINDS.map((kind) => entry[kind]).filter((q): q is WaiterQueue => !!q),
    );
  }

  // Session events of one member of the pool reach only the queues on that member's session
  // (docs/design.md "Sessions as a pool"): another session's drop says nothing about them.

  onSessionLost(
    connection: ZkConnection,
    session: ZkSession,
    reason: 'session-expired' | 'connection-lost',
  ): void {
    for (const q of this.on(connection)) q.onSessionLost(session, reason);
  }

  onSuspended(connection: ZkConnection, session: ZkSession): void {
    for (const q of this.on(connection)) q.onSuspended(session);
  }

  onReconnected(connection: ZkConnection, session: ZkSession): void {
    for (const q of this.on(connection)) q.onReconnected(session);
  }

  /** The queues whose nodes use `connection`'s sessions. */
  private on(connection: ZkConnection): WaiterQueue[] {
    return this.all().filter((q) => q.connection === connection);
  }

  /** Drops an idle queue; once nothing of its lock path is left, the reaper may remove the path. */
  private idle(queue: WaiterQueue, kind: LockKind): void {
    if (this.forget(queue, kind)) this.reaper.schedule(queue.lockPath);
  }

  /** Drops a queue from its path; true when nothing of the path is left. */
  private forget(queue: WaiterQueue, kind: LockKind): boolean {
    const entry = this.byPath.get(queue.lockPath);
    if (entry?.[kind] !== queue) return false;
    delete entry[kind];
    if (Object.keys(entry).length > 0) return false;
    this.byPath.delete(queue.lockPath);
    return true;
  }
}

/** @internal What the client tells its queues, and how they tell it about holds. */
export interface QueueContext {
  readonly connection: ZkConnection;
  /** The data of every node we create (host, pid, the nodeData option). */
  readonly nodeData: Buffer;
  /** At most this many nodes of ours per lock path and kind at a time. */
  readonly maxNodesPerPath: number;
  /** Whether anyone listens for lost locks on the client (then every holder watches its node). */
  watchesLoss(): boolean;
  released(lock: HeldLock): void;
  lost(lock: HeldLock, error: LockLostError): void;
  /** A contender's place may have changed (after the queue granted what it could). */
  placed?(contender: Contender): void;
}

/** One local caller: it waits (until its deadline or its abort) or tries once. */
interface Waiter {
  readonly tryOnly: boolean;
  /** The node this caller waits on; several callers of one batch share a node. */
  contender?: Contender;
  done: boolean;
  resolve(lock: HeldLock | null): void;
  reject(error: Error): void;
  /** Stops its timer and abort listener once its wait ended, either way. */
  cleanup(): void;
}

const RELEASED_MEMORY = 64;

/**
 * At most this many callers share an exclusive node, served in turn while other processes' nodes
 * wait: the bound that keeps shares fair (docs/design.md "Ownership and batching inside one
 * process"). Readers of one node hold together: not bounded.
 */
const MAX_BATCH = 32;

/**
 * @internal
 * One lock path and kind in one process: the FIFO of local callers, batched onto at most
 * `maxNodesPerPath` nodes. A node serves the callers without one when it was created (exclusive:
 * MAX_BATCH in turn, a fencing generation each; readers at once), so no caller of ours goes
 * ahead of an earlier remote node (docs/design.md "Ownership and batching inside one process").
 */
export class WaiterQueue {
  private readonly waiters: Waiter[] = [];
  /** How many of `waiters` wait (tries do not): what the client's caps count (LockQueues). */
  private waitingCallers = 0;
  /** Nodes that hold, with their callers (at most one node and caller if exclusive). */
  private readonly holding = new Map<Contender, Set<HeldLock>>();
  /** Node requests still under way: deletions, and nodes' loops. See track(). */
  private pending = 0;
  /** An exclusive node whose existence is being checked before it serves the next of its batch. */
  private confirming?: Contender;
  /** The names of our released nodes: never waited on again, even if a stale listing shows one. */
  private readonly released = new Set<string>();
  private idleWaiters: Array<() => void> = [];
  private creationScheduled = false;
  /** Callers whose deadline passed while their node was created or listed, with their wait. */
  private readonly overdue = new Map<Waiter, number>();

  constructor(
    private readonly ctx: QueueContext,
    private readonly onIdle: (queue: WaiterQueue) => void,
    readonly lockPath: string,
    readonly displayPath: string,
    private readonly driver: LockDriver,
    /** Told +1 when a caller starts waiting here and -1 when its wait ends, either way. */
    private readonly counted: (change: 1 | -1) => void = () => undefined,
  ) {}

  /** Nothing held, waited for or under way. */
  get idle(): boolean {
    return this.holding.size === 0 && this.waiters.length === 0 && this.pending === 0;
  }

  /** Callers waiting here now (a try is not waiting). */
  get waiting(): number {
    return this.waitingCallers;
  }

  /** The connection (one session of the client's pool) this queue's nodes use. */
  get connection(): ZkConnection {
    return this.ctx.connection;
  }

  /** Every caller holding now (close() releases them). */
  get holders(): HeldLock[] {
    return [...this.holding.values()].flatMap((locks) => [...locks]);
  }

  /** Waits for the lock (LockTimeoutError, LockAbortedError); `waitTimeoutMs: 0` tries once. */
  acquire(options: { waitTimeoutMs?: number; signal?: AbortSignal }): Promise<HeldLock> {
    const { waitTimeoutMs, signal } = options;
    // Before the try-once below too: a caller whose deadline ran out while its abort landed
    // (a multi-path lock or a semaphore between steps) is told it was aborted, and takes nothing.
    if (signal?.aborted) {
      return Promise.reject(new LockAbortedError(this.displayPath, signal.reason));
    }
    if (waitTimeoutMs === 0) {
      return this.tryAcquire().then(
        (lock) => lock ?? Promise.reject(new LockTimeoutError(this.displayPath, 0, 1)),
      );
    }
    return new Promise<HeldLock>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void =>
        this.cancel(waiter, new LockAbortedError(this.displayPath, signal!.reason));
      const waiter: Waiter = {
        tryOnly: false,
        done: false,
        resolve: resolve as (lock: HeldLock | null) => void,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      if (waitTimeoutMs !== undefined) {
        timer = setTimeout(() => this.timedOut(waiter, waitTimeoutMs), waitTimeoutMs);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.waitingCallers++;
      this.counted(1);
      this.pump();
    });
  }

  /**
   * The lock only if free now (one round trip); else null, once its node is deleted again. Without
   * a connected session, or once it drops (onSuspended): ZooKeeperUnavailableError at once.
   */
  tryAcquire(): Promise<HeldLock | null> {
    // Exclusive: a try fails at once while the lock is held or waited for in this process.
    if (!this.driver.shared && (this.holding.size > 0 || this.waiters.length > 0)) {
      return Promise.resolve(null);
    }
    const session = this.ctx.connection.current;
    if (session.state !== 'connected') return Promise.reject(this.noSessionForTry());
    return new Promise((resolve, reject) => {
      this.waiters.push({ tryOnly: true, done: false, resolve, reject, cleanup: () => undefined });
      this.pump();
    });
  }

  /** Resolves once nothing is held, waited for or under way (close() waits for it). */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Ends every wait (client closing); holders are left to the caller. */
  failAll(error: Error): void {
    for (const w of [...this.waiters]) this.cancel(w, error);
  }

  // ---- session events -----------------------------------------------------------------------

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    const detail = session.lossDetail(reason, 'the lock node');
    for (const lock of this.holdersIn(session)) lock.lose(reason, detail);
    // Its waiting callers queue again in the new session.
    for (const w of this.waiters) {
      if (w.contender?.session !== session) continue;
      w.contender.abandon();
      w.contender = undefined;
    }
    this.pump();
  }

  /** `session` dropped: its holders are uncertain; tries on this queue's session answer now. */
  onSuspended(session: ZkSession): void {
    for (const lock of this.holdersIn(session)) lock.suspend();
    if (session !== this.ctx.connection.current) return;
    for (const w of [...this.waiters]) if (w.tryOnly) this.cancel(w, this.noSessionForTry());
    this.endOverdue(); // their node's requests cannot finish now
  }

  onReconnected(session: ZkSession): void {
    for (const lock of this.holdersIn(session)) lock.resume();
    const nodes = new Set([...this.holding.keys(), ...this.waiters.map((w) => w.contender)]);
    for (const node of nodes) if (node?.session === session) node.reconnected();
    this.pump(); // a caller whose node may hold now that we are back
  }

  // ---- granting -----------------------------------------------------------------------------

  /** Grants what the driver allows now, drops tries that may not hold, queues new nodes. */
  private pump(): void {
    if (this.driver.shared) {
      for (const node of new Set(this.waiters.map((w) => w.contender))) {
        if (!node?.mayHold()) continue;
        this.grant(
          node,
          this.waiters.filter((w) => w.contender === node),
        );
      }
    } else if (this.holding.size === 0 && this.confirming === undefined) {
      this.grantNext();
    }
    this.dropLosingTries();
    this.endOverdue();
    this.scheduleNode();
  }

  /**
   * Exclusive: the first caller whose node may hold, once nothing of ours holds; a batch's next
   * caller only once the server confirmed the node since a reconnect (Contender.confirmSelf).
   */
  private grantNext(): void {
    const first = this.waiters.find((w) => w.contender?.isFirst);
    const node = first?.contender;
    if (!node?.mayHold()) return;
    if (!node.isHeld || node.confirmed) return this.grant(node, [first!]);
    this.confirming = node;
    void node.confirmSelf().finally(() => {
      if (this.confirming === node) this.confirming = undefined;
      this.pump();
    });
  }

  private grant(node: Contender, members: readonly Waiter[]): void {
    for (const w of members) this.finish(w);
    // Someone listens for lost locks, or the node will serve more callers of its batch: it
    // watches itself for deletion by others (else once someone asks: HeldLock.watchForLoss).
    const watched = this.ctx.watchesLoss() || this.waiters.some((w) => w.contender === node);
    // One token for the readers of a node; a new generation for each caller of an exclusive one.
    const { token, session } = node.hold();
    if (watched) node.watchSelf();
    const locks = this.holding.get(node) ?? new Set<HeldLock>();
    this.holding.set(node, locks);
    for (const w of members) {
      const lock: HeldLock = new HeldLock(
        this.displayPath,
        this.lockPath,
        this.driver.kind,
        node,
        session,
        token,
        (l) => this.release(l),
        (error) => this.ctx.lost(lock, error),
      );
      locks.add(lock);
      w.resolve(lock);
    }
  }

  /** A try that learned its place without being allowed to hold gives up at once. */
  private dropLosingTries(): void {
    for (const w of [...this.waiters]) {
      const node = w.contender;
      if (w.tryOnly && node && node.predecessor !== undefined && !node.isFirst) {
        this.cancel(w, null);
      }
    }
  }

  /**
   * The deadline bounds waiting, not the requests of an acquire (docs/design.md "Deadlines", as
   * Curator's LockInternals): a caller whose node is being created or listed on a connected
   * session is answered by that listing, granted if it may hold (pump), else timed out.
   */
  private timedOut(waiter: Waiter, waitTimeoutMs: number): void {
    if (this.placing(waiter)) this.overdue.set(waiter, waitTimeoutMs);
    else this.cancel(waiter, this.timeoutError(waiter, waitTimeoutMs));
  }

  /** Overdue callers whose node's check is over and who were not granted: timed out now. */
  private endOverdue(): void {
    for (const [w, waitTimeoutMs] of this.overdue) {
      if (!this.placing(w)) this.cancel(w, this.timeoutError(w, waitTimeoutMs));
    }
  }

  /** Its node is being created and listed (Contender.placing) on a connected session. */
  private placing(waiter: Waiter): boolean {
    return !!waiter.contender?.placing && this.ctx.connection.current.state === 'connected';
  }

  // ---- nodes --------------------------------------------------------------------------------

  /** Callers without a node that arrive in the same tick share one, created in a microtask. */
  private scheduleNode(): void {
    if (this.creationScheduled || !this.waiters.some((w) => !w.contender)) return;
    this.creationScheduled = true;
    queueMicrotask(() => {
      this.creationScheduled = false;
      this.queueNode();
    });
  }

  /** One new node for the callers without one (if exclusive, the first MAX_BATCH of them). */
  private queueNode(): void {
    const waiting = this.waiters.filter((w) => !w.contender);
    const batch = this.driver.shared ? waiting : waiting.slice(0, MAX_BATCH);
    if (batch.length === 0 || this.heldByLostCaller()) return;
    if (this.nodeCount() >= this.ctx.maxNodesPerPath) return; // a node of ours frees up first
    const contender = new Contender(
      this.ctx.connection,
      this.driver,
      this.lockPath,
      this.ctx.nodeData,
      this.released,
      (node) => {
        this.pump();
        this.ctx.placed?.(node);
      },
      (node) => this.vanished(node),
    );
    for (const w of batch) w.contender = contender;
    // A batch that gave up meanwhile: cancel() asked the contender to go, and its loop deletes
    // the node itself once it knows its name.
    void this.track(() =>
      contender.run().then(
        () => this.pump(),
        (err) => this.runFailed(contender, err),
      ),
    );
  }

  /** Its session went: the batch queues again; any other error ends its callers' waits. */
  private runFailed(contender: Contender, err: unknown): void {
    const members = this.waiters.filter((w) => w.contender === contender);
    for (const w of members) w.contender = undefined;
    if (isSessionGone(err)) return this.pump();
    // Only documented errors, naming the lock the caller was waiting for.
    const error = acquireError(err, this.displayPath, this.ctx.connection);
    for (const w of members) this.cancel(w, error);
  }

  /**
   * Exclusive: a lost holder's code still runs. A node queued now would come first and wait for
   * that code, keeping every other process out: queue once it is done.
   */
  private heldByLostCaller(): boolean {
    return !this.driver.shared && this.holders.some((lock) => lock.state === 'lost');
  }

  private nodeCount(): number {
    const nodes = new Set<Contender>(this.holding.keys());
    for (const w of this.waiters) if (w.contender) nodes.add(w.contender);
    return nodes.size;
  }

  /** Our node was deleted under us: its holders lost the lock, its waiting callers queue again. */
  private vanished(contender: Contender): void {
    const locks = this.holding.get(contender);
    const detail = `lock node ${contender.nodePath} was deleted by another client`;
    for (const lock of locks ?? []) lock.lose('node-deleted', detail);
    if (!locks) contender.abandon(); // a held node goes when its holders release
    for (const w of this.waiters) if (w.contender === contender) w.contender = undefined;
    this.pump();
  }

  // ---- the end of a wait or a hold ----------------------------------------------------------

  /** Takes the caller out of the local queue and stops its timer and abort listener. */
  private finish(waiter: Waiter): void {
    waiter.done = true;
    waiter.cleanup();
    this.overdue.delete(waiter);
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
    if (!waiter.tryOnly) {
      this.waitingCallers--;
      this.counted(-1);
    }
  }

  /**
   * Ends a wait with an error, or with null for a try; a node nobody needs any more goes. A try
   * answers null once that node is deleted, as Curator's tryLock: whoever the caller tells next
   * (another process, a listing) never finds the try still queued ahead of it.
   */
  private cancel(waiter: Waiter, error: Error | null): void {
    if (waiter.done) return;
    this.finish(waiter);
    const node = waiter.contender;
    const removal =
      node && !this.holding.has(node) && !this.waiters.some((w) => w.contender === node)
        ? this.track(() => node.remove())
        : undefined;
    const answer = (): void => (error ? waiter.reject(error) : waiter.resolve(null));
    if (error || !removal) answer();
    else void removal.then(answer, answer);
    this.pump();
    this.checkIdle();
  }

  /** HeldLock.end(): its last owner released it, or close() did; once per lock. */
  private async release(lock: HeldLock): Promise<void> {
    const node = lock.contender;
    const locks = this.holding.get(node);
    locks?.delete(lock);
    if (locks && locks.size > 0) return this.ctx.released(lock); // other readers hold on it
    this.holding.delete(node);
    if (
      lock.state !== 'lost' &&
      this.waiters.some((w) => w.contender === node) &&
      node.canServeAgain
    ) {
      // In-process handoff: the next caller of the batch holds the node now; while disconnected
      // pump() serves it once the session is back, and a lost session requeues the batch. The
      // node watches itself (one request per batch), so a deletion ends the batch with
      // LockLostError, and grantNext confirms the node first.
      this.ctx.released(lock);
      return this.pump();
    }
    // Callers of its batch that cannot be served on this node (lost, generations used up) requeue.
    for (const w of this.waiters) if (w.contender === node) w.contender = undefined;
    const deletion = this.track(() => this.retire(node, lock));
    this.pump(); // callers waiting for a node of their own can have one now
    return deletion;
  }

  /**
   * Deletes a released node. Our node queued right behind it is first once the deletion's event
   * comes, not before: that event also tells whether someone deleted the waiting node meanwhile
   * (docs/design.md "A waiter's own node").
   */
  private async retire(node: Contender, lock: HeldLock): Promise<void> {
    await node.remove();
    if (node.name) this.remember(node.name);
    this.ctx.released(lock);
  }

  /** A released node of ours: never waited on again, even if a stale listing still shows it. */
  private remember(name: string): void {
    this.released.add(name);
    if (this.released.size > RELEASED_MEMORY) {
      this.released.delete(this.released.values().next().value as string);
    }
  }

  /** Counts a node request under way until `work` settles: the one place `pending` moves. */
  private track<T>(work: () => Promise<T>): Promise<T> {
    this.pending++;
    const settled = (): void => {
      this.pending--;
      this.checkIdle();
    };
    // then() rather than finally(): one promise per request instead of three.
    return work().then(
      (value) => {
        settled();
        return value;
      },
      (err: unknown) => {
        settled();
        throw err;
      },
    );
  }

  private checkIdle(): void {
    if (!this.idle) return;
    this.onIdle(this);
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  // ---- what callers are told ----------------------------------------------------------------

  private holdersIn(session: ZkSession): HeldLock[] {
    return this.holders.filter((lock) => lock.session === session);
  }

  private noSessionForTry(): ZooKeeperUnavailableError {
    return noSessionForTry(this.ctx.connection, this.displayPath);
  }

  /**
   * The error of a wait that ran out of time, saying who is ahead: for readers the writers ahead
   * of their node; for an exclusive caller the other processes' nodes ahead (each maybe a batch)
   * and this process's callers ahead: on our nodes ahead, before it on its node, and the holder.
   */
  private timeoutError(waiter: Waiter, waitTimeoutMs: number): Error {
    const node = waiter.contender;
    let ahead: number | LockQueueAhead | undefined;
    if (node?.predecessor !== undefined && this.driver.shared) ahead = node.ahead;
    else if (node?.predecessor !== undefined) {
      const holder: Contender | undefined = this.holding.keys().next().value;
      const before = this.waiters.slice(0, this.waiters.indexOf(waiter));
      const sameNode = before.filter((w) => w.contender === node).length;
      const onOwnNodesAhead = before.filter(
        (w) => w.contender && w.contender !== node && w.contender.sequence < node.sequence,
      );
      const ownNodesAhead = new Set(onOwnNodesAhead.map((w) => w.contender));
      if (holder && holder !== node) ownNodesAhead.add(holder); // ahead: it holds
      ahead = {
        otherNodes: node.ahead - ownNodesAhead.size,
        ownCallers: onOwnNodesAhead.length + sameNode + (holder ? 1 : 0),
      };
    }
    return waitTimeoutError(this.ctx.connection, this.displayPath, waitTimeoutMs, ahead);
  }
}

/** @internal A try without a connected session does not wait for one. */
export function noSessionForTry(
  connection: ZkConnection,
  displayPath: string,
): ZooKeeperUnavailableError {
  const session = connection.current;
  const what = `a try of lock "${displayPath}" (the session is ${session.state}, and a try does not wait for one)`;
  return new ZooKeeperUnavailableError(session.connectionString, 0, what);
}

/**
 * @internal
 * A busy lock is a LockTimeoutError, saying who is `ahead` (undefined: not known);
 * a wait spent without a live session is a ZooKeeperUnavailableError.
 */
export function waitTimeoutError(
  connection: ZkConnection,
  displayPath: string,
  waitTimeoutMs: number,
  ahead: number | LockQueueAhead | undefined,
): Error {
  const session = connection.current;
  // A new session after this process stalled (paused past its timeout) is not ZooKeeper's fault.
  if (session.state !== 'connected' && !connection.afterStall) {
    return new ZooKeeperUnavailableError(
      session.connectionString,
      waitTimeoutMs,
      `while waiting for lock "${displayPath}" (session ${session.state})`,
    );
  }
  return new LockTimeoutError(displayPath, waitTimeoutMs, ahead);
}

/**
 * Failed removals on a connected session before a path is given up (a path the server refuses to
 * read drops the connection every time). One counts only if the server answered us since the last:
 * a server that answers nothing is an outage, and the path waits for its end.
 */
const FAILED_TRIES = 3;

/**
 * @internal
 * Removes lock nodes and their empty ancestors made as lock paths (isOwnLockPath) once idle for
 * `delayMs`, sooner than the container sweep; never the namespace or above. Safe against other
 * acquirers: a node with children is refused, a missing path is made again. One timer.
 */
export class ParentReaper {
  private readonly due = new Map<string, number>();
  /** Paths whose removal failed on a connected session: how often, and when last (FAILED_TRIES). */
  private readonly failures = new Map<string, { tries: number; at: number }>();
  private timer?: NodeJS.Timeout;
  private readonly inflight = new Set<Promise<void>>();
  private stopped = false;
  /** What the users of lock paths (lock queues, semaphores) still use: left alone. */
  private readonly inUse: Array<(lockPath: string) => boolean> = [];

  constructor(
    /** The connection whose session a lock path uses (its ancestors are removed through it too). */
    private readonly connectionOf: (lockPath: string) => ZkConnection,
    private readonly delayMs: number,
  ) {}

  /** A user of lock paths registers what it uses: the reaper never removes such a path. */
  keepWhile(inUse: (lockPath: string) => boolean): void {
    this.inUse.push(inUse);
  }

  /** How many paths it remembers (scheduled, being removed, failing): 0 once all are done. */
  get remembered(): number {
    return this.due.size + this.inflight.size + this.failures.size;
  }

  schedule(lockPath: string, delayMs = this.delayMs): void {
    if (this.stopped) return;
    if (delayMs <= 0) return this.start(lockPath);
    this.due.set(lockPath, Date.now() + delayMs);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), Math.max(50, Math.min(delayMs, 1000)));
      this.timer.unref();
    }
  }

  cancel(lockPath: string): void {
    this.due.delete(lockPath);
    this.failures.delete(lockPath);
  }

  /** Reaps everything scheduled now (close()). */
  async flush(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    const paths = [...this.due.keys()];
    this.due.clear();
    paths.forEach((p) => this.start(p));
    await Promise.all([...this.inflight]);
  }

  private start(lockPath: string): void {
    const reaping = this.reap(lockPath).finally(() => this.inflight.delete(reaping));
    this.inflight.add(reaping);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [path, at] of this.due) {
      if (at > now) continue;
      this.due.delete(path);
      this.start(path);
    }
    if (this.due.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async reap(lockPath: string): Promise<void> {
    const session = this.connectionOf(lockPath).current;
    if (this.isBusy(lockPath)) return;
    if (session.state !== 'connected') return this.retryLater(lockPath);
    let path = lockPath;
    // The lock node itself, then its ancestors while they are empty lock paths, deepest first.
    for (;;) {
      const outcome = await removeIdleLockPath(session, path);
      if (outcome === 'kept' || outcome === 'foreign') {
        this.failures.delete(lockPath);
        return; // in use elsewhere, or not ours
      }
      // Connection trouble: again later from the lock node, up to FAILED_TRIES.
      if (outcome === 'retry') return this.failed(lockPath, Date.now() - session.silenceMs);
      this.failures.delete(lockPath);
      path = parentPath(path);
      if (path === '/' || isNamespace(path, session.namespace) || this.hasBusyDescendant(path)) {
        return;
      }
    }
  }

  /** `heardAt`: when the server last answered us (a reply or a ping reply). */
  private failed(lockPath: string, heardAt: number): void {
    const now = Date.now();
    const previous = this.failures.get(lockPath);
    const tries = !previous ? 1 : heardAt > previous.at ? previous.tries + 1 : previous.tries;
    if (tries >= FAILED_TRIES) {
      this.failures.delete(lockPath);
      return;
    }
    this.failures.set(lockPath, { tries, at: now });
    this.retryLater(lockPath);
  }

  /** After connection trouble: unless the path is busy again (then cancel() drops it). */
  private retryLater(lockPath: string): void {
    if (!this.isBusy(lockPath)) this.schedule(lockPath, Math.max(this.delayMs, 1000));
  }

  private isBusy(lockPath: string): boolean {
    return this.inUse.some((inUse) => inUse(lockPath));
  }

  private hasBusyDescendant(dir: string): boolean {
    for (const p of this.due.keys()) if (p.startsWith(dir + '/')) return true;
    return false;
  }
}

/** A failed queueing as a documented error (errors.ts) naming the lock path, never a raw one. */
export function acquireError(err: unknown, path: string, connection: ZkConnection): ZkLockError {
  if (err instanceof ZooKeeperUnavailableError) {
    return unavailableFor(err, `for lock "${path}" (no session to queue in)`);
  }
  if (err instanceof ZkLockError) return err;
  const code = codeOf(err);
  if (code === ZkCode.NO_CHILDREN_FOR_EPHEMERALS) {
    return new InvalidLockPathError(
      path,
      'it names an ephemeral node (of some session), which cannot have children; a lock path ' +
        'must be a persistent node or not exist yet, so choose a path outside it',
    );
  }
  return documentedError(err, path, connection);
}

/**
 * No session for a request about `path` (ZkConnection.ready() failed): the connection's
 * ZooKeeperUnavailableError names no lock, so the same one naming `path`, its reason kept (a
 * refused TLS handshake, a refused connection). Anything else as it is.
 */
export function noSessionError(err: unknown, path: string): unknown {
  if (!(err instanceof ZooKeeperUnavailableError)) return err;
  return unavailableFor(err, `a session request for lock "${path}"`);
}

/** The connection's ZooKeeperUnavailableError (no session) as one about `what`, its reason kept. */
function unavailableFor(err: ZooKeeperUnavailableError, what: string): ZooKeeperUnavailableError {
  return new ZooKeeperUnavailableError(err.connectionString, err.timeoutMs, what, err.failure);
}

/**
 * A raw ZooKeeper request error as a documented one: no answer (connection loss, timeout, session
 * gone) is ZooKeeperUnavailableError; any other answer a ZkLockError naming the lock path.
 */
export function documentedError(err: unknown, path: string, connection: ZkConnection): ZkLockError {
  if (err instanceof ZkLockError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const code = codeOf(err);
  const unanswered = code === undefined || isInDoubt(err) || isSessionGone(err);
  const error = unanswered
    ? new ZooKeeperUnavailableError(
        connection.current.connectionString,
        connection.requestTimeoutMs,
        `a request for lock "${path}" (${detail})`,
      )
    : new ZkLockError(
        `ZooKeeper refused a request for lock "${path}": ${detail}. ` +
          'Check the lock path, ACLs and quotas on the server.',
      );
  error.cause = err;
  return error;
}

/** Node timers cannot wait longer than 2^31-1 ms: a larger value would fire at once. */
export const MAX_WAIT_MS = 2 ** 31 - 1;

export function checkWaitTimeout(path: string, options: AcquireOptions): void {
  const ms = options.waitTimeoutMs;
  if (ms === undefined || (Number.isFinite(ms) && ms >= 0 && ms <= MAX_WAIT_MS)) return;
  throw new InvalidLockOptionsError(
    path,
    `waitTimeoutMs must be from 0 to ${MAX_WAIT_MS} ms (about 24.8 days), got ${String(ms)}`,
    'Leave it out to wait forever, or pass 0 to try once',
  );
}

/** How a wait that failed with `err` ended (the `waited` event's outcome). */
export function waitOutcomeOf(err: unknown): WaitOutcome {
  const name = (err as Error | undefined)?.name;
  if (name === 'LockTimeoutError') return 'timeout';
  return name === 'LockAbortedError' ? 'aborted' : 'failed';
}
