// The checks and outcomes of a call's wait options (waitTimeoutMs).
import { InvalidLockOptionsError } from '../errors';
import type { AcquireOptions, WaitOutcome } from '../types';

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
