import { EMPTY, Observable } from 'rxjs';
import { MAX_WAIT_MS } from '../../core/client/acquire-options';
import { Logger } from '@nestjs/common';
import { ClientClosedError, LockTimeoutError, ZkLockError } from '../../core/errors';
import type { AcquireOptions, LockEvents } from '../../core/types';
import type {
  DistributedLockOptions,
  DistributedLockSpec,
} from '../decorators/distributed-lock.options';
import { holdFor, type HoldFn, type Holding } from './distributed-lock.holding';
import type { LockService } from './lock.service';

/**
 * `onBusy` and `minHoldMs` that cannot work fail when the class is defined, naming
 * `Class.method`, the allowed values and what to do.
 */
export function checkOnBusy(options: DistributedLockOptions, where: string): void {
  const { onBusy, minHoldMs } = options;
  if (onBusy !== undefined && onBusy !== 'wait' && onBusy !== 'skip') {
    throw new ZkLockError(
      `@DistributedLock on ${where}: onBusy must be 'wait' or 'skip' (got ${JSON.stringify(onBusy)}); ` +
        "'skip' returns undefined when the lock is busy, leave it out to wait.",
    );
  }
  if (onBusy === 'skip' && options.waitTimeoutMs !== undefined) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: waitTimeoutMs (${String(options.waitTimeoutMs)}) has no ` +
        "effect with onBusy: 'skip', which tries once; remove one of them.",
    );
  }
  if (
    minHoldMs !== undefined &&
    !(Number.isFinite(minHoldMs) && minHoldMs >= 0 && minHoldMs <= MAX_WAIT_MS)
  ) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: minHoldMs must be a number from 0 to ${MAX_WAIT_MS} ` +
        `(got ${String(minHoldMs)}); set it above the clock skew between instances and below ` +
        "the job's period, or leave it out.",
    );
  }
}

/** What a skipped call returns: an empty Observable for a method declared to return one. */
export function skippedValue(returnType: unknown): unknown {
  return returnType === Observable ? EMPTY : undefined;
}

const logger = new Logger('ZkLock');

/** Marks a call that did not run because the lock was busy (`onBusy: 'skip'`). */
export const SKIPPED: unique symbol = Symbol('zk-lock:skipped');

/**
 * The hold of a decorated method with `onBusy: 'skip'` (docs/design.md §9): tries once
 * (`waitTimeoutMs: 0`) and, when busy, resolves with SKIPPED instead of running `fn`, after
 * emitting `skipped` on the client (the event logger logs it at debug level; metrics count it).
 * A LockTimeoutError from inside `fn` (a nested lock) is the method's own error: it passes through.
 */
export function skipWhenBusy(
  hold: HoldFn,
  locks: LockService,
  where: string,
  path: string | string[],
  signal?: AbortSignal,
): <T>(fn: (held: Holding) => Promise<T>) => Promise<T | typeof SKIPPED> {
  return async (fn) => {
    let started = false;
    try {
      return await hold(
        (held) => {
          started = true;
          return fn(held);
        },
        { waitTimeoutMs: 0, signal },
      );
    } catch (err) {
      // The shutdown closed the client before the one try: an expected end, not a failure.
      if (!started && err instanceof ClientClosedError) {
        logger.log(`Skipped ${where}: the application is shutting down`);
        return SKIPPED;
      }
      if (started || !(err instanceof LockTimeoutError)) throw err;
      const skipped: LockEvents['skipped'] = { path: [path].flat().join(', '), where };
      locks.client.emit('skipped', skipped);
      return SKIPPED;
    }
  };
}

/** How a decorated call holds its path(s), as `runHeld` takes it. */
export interface CallHold {
  withLock: <T>(fn: (held: Holding) => Promise<T>) => Promise<T | typeof SKIPPED>;
  /** With `minHoldMs`: keeps the lock until that long after it was taken. */
  linger?: (held: Holding) => Promise<void> | undefined;
}

/** withLock, then linger before the release (for callers that answer before `fn` resolves). */
export function lingering({ withLock, linger }: CallHold): CallHold['withLock'] {
  if (!linger) return withLock;
  return (fn) =>
    withLock(async (held) => {
      const result = await fn(held);
      await linger(held);
      return result;
    });
}

/**
 * The hold of one call of a decorated method (docs/design.md §9), from its options: waits (`options`: waitTimeoutMs,
 * signal) or, with `onBusy: 'skip'`, tries once; with `minHoldMs`, holds at least that long.
 */
export function callHold(
  locks: LockService,
  spec: DistributedLockSpec,
  path: string | string[],
  options: AcquireOptions,
): CallHold {
  const hold = holdFor(locks, spec, path);
  const { onBusy, minHoldMs } = spec.options;
  const base: CallHold['withLock'] =
    onBusy === 'skip'
      ? skipWhenBusy(hold, locks, spec.where, path, options.signal)
      : (fn) => hold(fn, options);
  if (!minHoldMs) return { withLock: base };
  let since = 0;
  return {
    withLock: (fn) =>
      base((held) => {
        since = performance.now();
        return fn(held);
      }),
    linger: (held) => holdAtLeast(since, minHoldMs, held.signal),
  };
}

/**
 * Resolves once `minHoldMs` have passed since `since` (a `performance.now()`, immune to wall
 * clock changes), or at once when the lock is lost or released by a shutdown (its signal
 * aborts): no timer outlives the lock. Undefined when there is nothing left to wait.
 */
function holdAtLeast(
  since: number,
  minHoldMs: number,
  signal: AbortSignal,
): Promise<void> | undefined {
  const remaining = since + minHoldMs - performance.now();
  if (remaining <= 0 || signal.aborted) return undefined;
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, remaining);
    signal.addEventListener('abort', done, { once: true });
  });
}
