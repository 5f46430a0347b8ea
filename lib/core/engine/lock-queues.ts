// The registry of a client's WaiterQueues, by lock path and kind.
import { LockModeError, LockQueueFullError } from '../errors';
import type { ParentReaper } from './parent-reaper';
import type { AcquireOptions } from '../types';
import { sessionIndexOf } from '../zookeeper/zk-connection';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { DRIVERS, type LockKind } from './lock-drivers';
import type { HeldLock } from './held-lock';
import { QueueContext, WaiterQueue } from './waiter-queue';

type PathQueues = Partial<Record<LockKind, WaiterQueue>>;
const KINDS = Object.keys(DRIVERS) as LockKind[];

/** @internal The client's caps on waiting callers (options of the same names). */
export interface WaiterCaps {
  readonly maxWaitersPerPath: number;
  readonly maxWaiters: number;
}

/**
 * @internal
 * The client's local queues, by lock path. One path is either a mutex or a read/write lock in a
 * process: mixing them would not exclude (their node names differ), so it fails before any
 * request. A path whose last queue went idle is handed to the reaper, which leaves alone the
 * paths still here. A caller that would wait beyond the caps (`caps`) is refused before anything
 * is queued or sent: memory stays bounded however fast callers come.
 */
export class LockQueues {
  private readonly byPath = new Map<string, PathQueues>();
  /** Callers waiting in all the queues (WaiterQueue.waiting, summed as they change). */
  private waiting = 0;

  constructor(
    /**
     * The queue context of each session of the pool, in member order: a lock path's queues get
     * its session's (sessionIndexOf; docs/design.md "Sessions as a pool").
     */
    private readonly contexts: readonly QueueContext[],
    private readonly reaper: ParentReaper,
    private readonly caps: WaiterCaps,
  ) {
    reaper.keepWhile((lockPath) => this.byPath.has(lockPath));
  }

  /**
   * Hands one acquire (or a try: `'try'`) of `kind` on `lockPath` to its queue, created on first
   * use: the path is no longer due for cleanup. Throws
   * LockModeError on mixing, and LockQueueFullError for a caller that would wait beyond the caps,
   * before any of that.
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
    this.reaper.cancel(lockPath);
    // Created and asked in one go: the queue's code runs from its constructor on.
    const queue = (entry[kind] ??= new WaiterQueue(
      this.contexts[sessionIndexOf(lockPath, this.contexts.length)],
      (q) => this.idle(q, kind),
      lockPath,
      path,
      DRIVERS[kind],
      (change) => (this.waiting += change),
    ));
    return request === 'try' ? queue.tryAcquire() : queue.acquire(request);
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
    const entry = this.byPath.get(queue.lockPath);
    if (entry?.[kind] !== queue) return;
    delete entry[kind];
    if (Object.keys(entry).length > 0) return;
    this.byPath.delete(queue.lockPath);
    this.reaper.schedule(queue.lockPath);
  }
}
