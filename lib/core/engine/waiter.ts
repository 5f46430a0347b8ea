// A local caller of a WaiterQueue: the wait it asked for, its timer and its abort signal.
import type { Contender } from './contender';
import type { HeldLock } from './held-lock';

/** @internal One local caller waiting for a lock (or trying once). */
export interface Waiter {
  readonly tryOnly: boolean;
  /** The node this caller waits on; several callers of one batch share a node. Set by its queue only. */
  contender?: Contender;
  done: boolean;
  resolve(lock: HeldLock | null): void;
  reject(error: Error): void;
  cleanup(): void;
}

/** How a wait ends on its own: its queue cancels it with the error of each. */
export interface WaitEnds {
  timedOut(waiter: Waiter, waitTimeoutMs: number): void;
  aborted(waiter: Waiter, signal: AbortSignal): void;
}

/**
 * @internal A caller that waits, for at most `waitTimeoutMs` (undefined: no limit) or until its
 * `signal` aborts; cleanup() stops both once the wait ended either way.
 */
export function waitingCaller(
  resolve: (lock: HeldLock) => void,
  reject: (error: Error) => void,
  options: { waitTimeoutMs?: number; signal?: AbortSignal },
  ends: WaitEnds,
): Waiter {
  const { waitTimeoutMs, signal } = options;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = (): void => ends.aborted(waiter, signal!);
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
    timer = setTimeout(() => ends.timedOut(waiter, waitTimeoutMs), waitTimeoutMs);
  }
  signal?.addEventListener('abort', onAbort, { once: true });
  return waiter;
}

/** @internal A caller that tries once: it holds if its node may at once, else gets null. */
export function tryingCaller(
  resolve: (lock: HeldLock | null) => void,
  reject: (error: Error) => void,
): Waiter {
  return { tryOnly: true, done: false, resolve, reject, cleanup: () => undefined };
}
