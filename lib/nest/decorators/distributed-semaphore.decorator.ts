// Owns @DistributedSemaphore: @DistributedLock with a semaphore's maxLeases.
import { ZkLockError } from '../../core/errors';
import { DistributedLock } from './distributed-lock.decorator';

/** Options of `@DistributedSemaphore`. */
export interface DistributedSemaphoreOptions {
  /** How many holders at once, across every instance (the same value everywhere). */
  maxLeases: number;
  /** How many leases one call takes (default 1). */
  leases?: number;
  /** Give up after this long: 409 on HTTP, LockTimeoutError elsewhere. Default: module option. */
  waitTimeoutMs?: number;
  /** `'skip'`: try once, and when no lease is free do not run the method (see DistributedLockOptions). */
  onBusy?: 'wait' | 'skip';
  /** Keep the lease at least this long after it was taken (see DistributedLockOptions). */
  minHoldMs?: number;
}

/**
 * Runs the method holding a lease of the semaphore at the path (at most `maxLeases` calls at
 * once across all instances), e.g. `@DistributedSemaphore('/sem/pdf-render', { maxLeases: 4 })`.
 * A decorator of its own, because it reads as what it is (a limit, not a lock); it works like
 * `@DistributedLock` in every other way (templates, contexts, errors, lazy results).
 */
export function DistributedSemaphore(
  template: string | ((...args: any[]) => string),
  options: DistributedSemaphoreOptions,
): ReturnType<typeof DistributedLock> {
  if (!options || typeof options !== 'object') {
    throw new ZkLockError(
      '@DistributedSemaphore needs options with maxLeases, e.g. { maxLeases: 4 }',
    );
  }
  return DistributedLock(template as string, { ...options });
}
