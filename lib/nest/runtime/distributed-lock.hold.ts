// Owns how one call of a decorated method holds its lock: wait or skip, run, lazy results, minHoldMs.
import { Logger } from '@nestjs/common';
import { AsyncResource } from 'node:async_hooks';
import { finished } from 'node:stream';
import { EMPTY, isObservable, Observable, type Subscriber } from 'rxjs';
import { CLIENT_INTERNALS } from '../../core/client/client-internals';
import type { ZkLockClient } from '../../core/client/lock-client';
import { ClientClosedError, LockTimeoutError } from '../../core/errors';
import type { AcquireOptions, ConnectionState, LockState } from '../../core/types';
import type { DistributedLockSpec } from '../decorators/distributed-lock.options';
import { markLogged } from '../errors/lock-errors.transport';
import type { LockService } from './lock.service';

/** One call of a decorated method, its lock path resolved (distributed-lock.wrapper.ts). */
export interface LockedCall {
  readonly spec: DistributedLockSpec;
  readonly locks: LockService;
  readonly path: string | string[];
  /** The wait of this call (`onBusy: 'skip'` ignores it: it tries once). */
  readonly waitTimeoutMs: number | undefined;
  /** The user's method, the instance and the arguments (after pipes) it is called with. */
  readonly method: (...args: unknown[]) => unknown;
  readonly self: unknown;
  readonly args: unknown[];
  /** A route handler call: it answers 503 as soon as its lock is lost, without waiting. */
  readonly handlerCall: boolean;
}

/** What a decorated method holds while it runs: a lock, a lease or several locks. */
interface Holding {
  readonly signal: AbortSignal;
  watchForLoss(): AbortSignal;
  readonly state: LockState;
}

type Hold = <T>(fn: (held: Holding) => Promise<T>, options: AcquireOptions) => Promise<T>;

/**
 * Runs one call under its lock (docs/design.md "Busy locks in decorators (`onBusy`) and run-once
 * jobs (`minHoldMs`)"): acquire (`onBusy: 'skip'`: try once, resolve without running when busy)
 * -> run -> hand out the result -> hold until a lazy result has finished, a `@Res()` response is
 * sent and `minHoldMs` has passed -> release. A plain result or the method's error is answered
 * once the release is done, or sooner when ZooKeeper is unreachable (answerOnceReleased).
 */
export function holdCall(call: LockedCall): Promise<unknown> {
  const { spec, locks, path } = call;
  const skip = spec.options.onBusy === 'skip';
  const hold = holdOf(locks, spec, path);
  return new Promise((resolve, reject) => {
    let started = false;
    /** The caller's answer, once the method is done; given once (see answerOnceReleased). */
    let answer: Answer | undefined;
    const run = async (held: Holding): Promise<void> => {
      started = true;
      const since = performance.now(); // monotonic: a wall clock step changes no minimum hold
      // A deletion of the node by another client (a force-revoke) ends the hold too.
      const signal = held.watchForLoss();
      let value: unknown;
      try {
        const result = call.method.apply(call.self, call.args);
        value = await (call.handlerCall ? untilLost(result, signal, call) : result);
      } catch (err) {
        answer = answerOnceReleased(locks, held, () =>
          reject(withDecoratorAdvice(err, spec.where)),
        );
        throw err;
      }
      const lazy = holdUntilDone(value);
      const response = spec.responseArg === undefined ? undefined : call.args[spec.responseArg];
      const sent = response === undefined ? undefined : whenResponseSent(response);
      const minimum = holdAtLeast(since, spec.options.minHoldMs, signal);
      if (!lazy.done && !sent && !minimum) {
        answer = answerOnceReleased(locks, held, () => resolve(lazy.value));
        return;
      }
      // Consumed later: handed out at once, held until it has finished.
      answer = HANDED_OUT;
      resolve(lazy.value);
      await Promise.all([lazy.done, sent, minimum]);
    };
    // The template labels the call's lock events (docs/design.md "Telemetry").
    const pathTemplate = spec.metricsTemplate;
    const options = { waitTimeoutMs: skip ? 0 : call.waitTimeoutMs, pathTemplate };
    attempt(hold, run, options).then(
      () => answer?.now(),
      (err: unknown) => {
        if (answer) return answer.now(); // the method's own answer, or its result's
        // A skipped call resolves like a method with nothing to do.
        if (skip && !started && skipped(err, call)) {
          resolve(spec.returnsObservable ? EMPTY : undefined);
        } else {
          reject(withDecoratorAdvice(err, spec.where));
        }
      },
    );
  });
}

/** A call's answer, given once: by `now()`, or sooner (see answerOnceReleased). */
interface Answer {
  now(): void;
}

/** The answer of a result handed out before its release already. */
const HANDED_OUT: Answer = { now: () => undefined };

/**
 * `give` once the release has reached ZooKeeper (the caller calls `now()` then), or sooner: at
 * once while ZooKeeper is unreachable (the client SUSPENDED or LOST, now or while the release
 * waits, or the lock no longer held), and after releaseAnswerBoundMs while the client still
 * looks connected (a silent server looks connected until the session's clock suspects it).
 * The release goes on in the background; its node stays until deleted or its session ends.
 */
function answerOnceReleased(locks: LockService, held: Holding, give: () => void): Answer {
  const { client } = locks;
  let given = false;
  let stopWatching: (() => void) | undefined;
  let bound: NodeJS.Timeout | undefined;
  const now = (): void => {
    if (given) return;
    given = true;
    clearTimeout(bound);
    stopWatching?.();
    give();
  };
  if (held.state !== 'held' || !reachable(client.state)) {
    now();
  } else {
    stopWatching = releasesOf(client).whenUnreachable(now);
    bound = setTimeout(now, releaseAnswerBoundMs(client));
  }
  return { now };
}

function reachable(state: ConnectionState): boolean {
  return state === 'CONNECTED' || state === 'RECONNECTED';
}

/** The longest a caller waits for its release's reply while the client looks connected. */
const RELEASE_ANSWER_FLOOR_MS = 1000;

/**
 * How long an answer waits for its release's reply while the client looks connected: four
 * times the client's round-trip estimate, at least RELEASE_ANSWER_FLOOR_MS (a busy server is no
 * reason to answer before the lock is free), at most a sixth of the session timeout (the cap
 * wins): a quarter of the time after which the session's clock suspects a silent server.
 */
function releaseAnswerBoundMs(client: ZkLockClient): number {
  const { roundTripMs, sessionTimeoutMs } = CLIENT_INTERNALS.get(client)!;
  const observed = Math.max(RELEASE_ANSWER_FLOOR_MS, 4 * (roundTripMs ?? 0));
  return Math.min(observed, sessionTimeoutMs / 6);
}

/** The releases under way of one client whose callers wait for their reply. */
class PendingReleases {
  private readonly calls = new Set<() => void>();

  constructor(private readonly client: ZkLockClient) {}

  /**
   * Calls `fn` once the client is SUSPENDED, LOST or CLOSED; returns what stops that. One
   * 'state' listener while any release is under way, none once none is.
   */
  whenUnreachable(fn: () => void): () => void {
    if (this.calls.size === 0) this.client.on('state', this.onState);
    this.calls.add(fn);
    return () => {
      if (this.calls.delete(fn) && this.calls.size === 0) this.client.off('state', this.onState);
    };
  }

  private readonly onState = (state: ConnectionState): void => {
    if (reachable(state)) return;
    const told = [...this.calls];
    this.calls.clear();
    this.client.off('state', this.onState);
    for (const call of told) call();
  };
}

const pendingReleases = new WeakMap<ZkLockClient, PendingReleases>();

function releasesOf(client: ZkLockClient): PendingReleases {
  let releases = pendingReleases.get(client);
  if (!releases) {
    releases = new PendingReleases(client);
    pendingReleases.set(client, releases);
  }
  return releases;
}

/**
 * How the call holds its path(s): the mutex, one side of the read/write lock (`mode`), a
 * semaphore lease (`maxLeases`) or, for several paths, the multi-path lock; through the client's
 * public API, not LockService, whose default wait the call's own already includes.
 */
function holdOf(locks: LockService, spec: DistributedLockSpec, path: string | string[]): Hold {
  const { mode, maxLeases, leases } = spec.options;
  const client = locks.client;
  if (Array.isArray(path)) return (fn, options) => client.withLockAll(path, fn, options);
  if (maxLeases !== undefined) {
    return (fn, options) =>
      client.semaphore(path, { maxLeases }).withLease(fn, { ...options, leases });
  }
  if (mode === 'read' || mode === 'write') {
    const side = mode === 'read' ? client.readLock(path) : client.writeLock(path);
    return (fn, options) => side.withLock(fn, options);
  }
  return (fn, options) => client.withLock(path, fn, options);
}

/** `hold(fn, options)`, a synchronous throw as a rejection. */
function attempt<T>(hold: Hold, fn: (held: Holding) => Promise<T>, options: AcquireOptions) {
  try {
    return hold(fn, options);
  } catch (err) {
    return Promise.reject(err);
  }
}

const logger = new Logger('ZkLock');

/**
 * Whether an error of the one try of `onBusy: 'skip'`, before the method started, is a skip: a
 * busy lock (emitted as `skipped` for the event logger and metrics), or a shutdown that closed
 * the client first. A timeout from inside the method (a nested lock) is the method's own error.
 */
function skipped(err: unknown, { spec, locks, path }: LockedCall): boolean {
  if (err instanceof ClientClosedError) {
    logger.log(`Skipped ${spec.where}: the application is shutting down`);
    return true;
  }
  if (!(err instanceof LockTimeoutError)) return false;
  const skippedCall = { path: [path].flat().join(', '), where: spec.where };
  const pathTemplate = spec.metricsTemplate;
  locks.client.emit('skipped', pathTemplate ? { ...skippedCall, pathTemplate } : skippedCall);
  return true;
}

/**
 * Resolves once `minHoldMs` have passed since `since` (a `performance.now()`), or at once when
 * the lock is lost or released by a shutdown (its signal aborts): no timer outlives the lock.
 * Undefined when there is nothing left to wait.
 */
function holdAtLeast(
  since: number,
  minHoldMs: number | undefined,
  signal: AbortSignal,
): Promise<void> | undefined {
  if (!minHoldMs) return undefined;
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

const lostLogger = new Logger('DistributedLock');

/**
 * The method's result, unless the lock is lost first: then the loss (a LockLostError) rejects
 * at once, so a route handler answers 503 (docs/nestjs/transports-and-errors.md).
 */
function untilLost(result: unknown, signal: AbortSignal, call: LockedCall): Promise<unknown> {
  if (!(result instanceof Promise)) return Promise.resolve(result);
  return new Promise((resolve, reject) => {
    const lost = (): void => {
      const reason: unknown = signal.reason;
      lostLogger.error(
        `${call.spec.where} lost lock "${[call.path].flat().join('", "')}" while running; answering 503: ` +
          (reason instanceof Error ? reason.message : String(reason)),
      );
      markLogged(reason);
      reject(reason as Error);
    };
    if (signal.aborted) return lost();
    signal.addEventListener('abort', lost, { once: true });
    result.then(
      (value) => {
        signal.removeEventListener('abort', lost);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', lost);
        reject(err);
      },
    );
  });
}

/** Timeouts already given the advice of the decorated method they came from. */
const advised = new WeakSet<LockTimeoutError>();

/**
 * A timeout of a decorated method, with advice a decorator user can follow (the core's speaks
 * of tryAcquire); the same class, the core's error as its cause. Once: the outermost
 * decorated caller keeps the advice of the method whose lock was busy.
 */
function withDecoratorAdvice(err: unknown, where: string): unknown {
  if (!(err instanceof LockTimeoutError) || advised.has(err)) return err;
  const advice =
    `Raise waitTimeoutMs of @DistributedLock on ${where} (or the module's waitTimeoutMs), ` +
    "shorten the work done under this lock, or set onBusy: 'skip' to skip the call when busy.";
  const mapped = new LockTimeoutError(err.path, err.waitTimeoutMs, err.queue ?? err.ahead, advice, {
    cause: err,
  });
  advised.add(mapped);
  return mapped;
}

/**
 * A result consumed after the method returns (an Observable, a stream or StreamableFile, an
 * async iterable): the lock stays held until it has finished. `value` is what the caller gets,
 * an Observable or iterable running its producer in the lock's async context (re-entry works)
 * without buffering; `done` settles once it completed, errored, ended, closed or was dropped.
 */
interface HeldResult {
  value: unknown;
  /** Undefined for a value that is complete when returned (nothing to wait for). */
  done?: Promise<void>;
}

function holdUntilDone(result: unknown): HeldResult {
  if (isObservable(result)) return holdObservable(result);
  const stream = streamOf(result);
  if (stream) return { value: result, done: whenFinished(stream) };
  if (isAsyncIterable(result)) return holdIterable(result);
  return { value: result };
}

/** An HTTP response the method writes itself (`@Res()`): done once it has been sent or closed. */
function whenResponseSent(response: unknown): Promise<void> | undefined {
  const raw = (response as { raw?: unknown })?.raw ?? response; // Fastify's reply wraps it
  const res = raw as { writableEnded?: boolean; destroyed?: boolean } & NodeJS.EventEmitter;
  if (!res || typeof res.on !== 'function' || res.writableEnded || res.destroyed) return undefined;
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('finish', done).off('close', done);
      resolve();
    };
    res.on('finish', done).on('close', done);
  });
}

function holdObservable(source: Observable<unknown>): HeldResult {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  // Subscribed in the lock's async context, whenever the caller subscribes.
  const subscribe = AsyncResource.bind((subscriber: Subscriber<unknown>) =>
    source.subscribe(subscriber),
  );
  const value = new Observable<unknown>((subscriber) => {
    const inner = subscribe(subscriber);
    inner.add(finish); // complete, error or unsubscribe
    return inner;
  });
  return { value, done };
}

function holdIterable(source: AsyncIterable<unknown>): HeldResult {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const iterator = source[Symbol.asyncIterator]();
  const step = AsyncResource.bind((method: 'next' | 'return' | 'throw', arg?: unknown) =>
    (iterator[method] ?? iterator.next).call(iterator, arg),
  );
  const settle = async (result: Promise<IteratorResult<unknown>>) => {
    try {
      const r = await result;
      if (r.done) finish();
      return r;
    } catch (err) {
      finish();
      throw err;
    }
  };
  const value: AsyncIterableIterator<unknown> = {
    next: (arg?: unknown) => settle(step('next', arg)),
    return: (arg?: unknown) => settle(step('return', arg)).finally(finish),
    throw: (arg?: unknown) => settle(step('throw', arg)).finally(finish),
    [Symbol.asyncIterator]() {
      return value;
    },
  };
  return { value, done };
}

function streamOf(result: unknown): NodeJS.ReadableStream | undefined {
  const r = result as { getStream?: () => unknown; pipe?: unknown; on?: unknown };
  if (!r || typeof r !== 'object') return undefined;
  if (typeof r.getStream === 'function') return streamOf(r.getStream()); // StreamableFile
  return typeof r.pipe === 'function' && typeof r.on === 'function'
    ? (result as NodeJS.ReadableStream)
    : undefined;
}

function whenFinished(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve) => finished(stream, () => resolve()));
}

function isAsyncIterable(result: unknown): result is AsyncIterable<unknown> {
  return (
    !!result &&
    typeof result === 'object' &&
    typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  );
}
