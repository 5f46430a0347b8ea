import { InvalidLockOptionsError } from './errors';
import type { AcquireOptions } from './types';

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
