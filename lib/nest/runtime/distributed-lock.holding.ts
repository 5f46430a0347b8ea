import type { AcquireOptions } from '../../core/types';
import type { DistributedLockSpec } from '../decorators/distributed-lock.options';
import type { LockService } from './lock.service';

/** What a decorated method holds while it runs: a lock, a lease or several locks. */
export interface Holding {
  readonly signal: AbortSignal;
}

export type HoldFn = <T>(fn: (held: Holding) => Promise<T>, options: AcquireOptions) => Promise<T>;

/**
 * How a decorated method holds its path(s), from its options: the mutex (default), one side of
 * the read/write lock (`mode`), a semaphore lease (`@DistributedSemaphore`), or, when the path
 * function returns several paths, the multi-path lock.
 */
export function holdFor(
  locks: LockService,
  spec: DistributedLockSpec,
  path: string | string[],
): HoldFn {
  const { mode, maxLeases, leases } = spec.options;
  if (Array.isArray(path)) return (fn, options) => locks.withLockAll(path, fn, options);
  if (maxLeases !== undefined) {
    return (fn, options) =>
      locks.semaphore(path, { maxLeases }).withLease(fn, { ...options, leases });
  }
  if (mode) {
    const side = mode === 'read' ? locks.readLock(path) : locks.writeLock(path);
    return (fn, options) => side.withLock(fn, options);
  }
  return (fn, options) => locks.withLock(path, fn, options);
}
