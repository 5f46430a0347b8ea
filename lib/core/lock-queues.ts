import { LockModeError } from './errors';
import type { HeldLock } from './held-lock';
import { writeDriver } from './recipes/lock-driver';
import { LockQueue, QueueHost } from './recipes/lock-queue';
import { ReadQueue } from './recipes/read-queue';
import type { ZkSession } from './zookeeper/zk-session';

export type LockKind = 'mutex' | 'read' | 'write';
/** The local queue of one lock path and one kind: the mutex, or one side of a read/write lock. */
export type PathQueue = LockQueue | ReadQueue;

interface PathQueues {
  mutex?: LockQueue;
  read?: ReadQueue;
  write?: LockQueue;
}

/**
 * The client's local queues, by lock path. One path is either a mutex or a read/write lock in a
 * process: mixing them would not exclude (their node names differ), so it fails before any request.
 */
export class LockQueues {
  private readonly byPath = new Map<string, PathQueues>();

  constructor(private readonly host: QueueHost) {}

  /** The queue for `kind` on `lockPath`, created on first use; throws LockModeError on mixing. */
  get(lockPath: string, path: string, kind: LockKind): PathQueue {
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
    const existing = entry[kind];
    if (existing) return existing;
    const queue =
      kind === 'read'
        ? new ReadQueue(this.host, lockPath, path)
        : new LockQueue(this.host, lockPath, path, kind === 'write' ? writeDriver : undefined);
    (entry as Record<LockKind, PathQueue>)[kind] = queue;
    return queue;
  }

  /** Drops an idle queue; true when nothing of the lock path is left (it may be cleaned up). */
  remove(queue: { readonly lockPath: string; readonly idle: boolean }): boolean {
    const entry = this.byPath.get(queue.lockPath);
    if (!entry || !queue.idle) return false;
    const kind = (Object.keys(entry) as LockKind[]).find((k) => entry[k] === queue);
    if (!kind) return false;
    delete entry[kind];
    if (entry.mutex || entry.read || entry.write) return false;
    this.byPath.delete(queue.lockPath);
    return true;
  }

  has(lockPath: string): boolean {
    return this.byPath.has(lockPath);
  }

  all(): PathQueue[] {
    return [...this.byPath.values()].flatMap((e) =>
      [e.mutex, e.read, e.write].filter((q): q is PathQueue => !!q),
    );
  }

  /** Every lock held now (close() releases them). */
  static holdersOf(queue: PathQueue): HeldLock[] {
    if (queue instanceof ReadQueue) return queue.holders;
    return queue.holder ? [queue.holder] : [];
  }

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    for (const q of this.all()) q.onSessionLost(session, reason);
  }

  onSuspended(session: ZkSession): void {
    for (const q of this.all()) {
      q.onSuspended(session);
      q.failTries();
    }
  }

  onReconnected(session: ZkSession): void {
    for (const q of this.all()) q.onReconnected(session);
  }
}
