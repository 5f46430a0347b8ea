// Owns results that finish after the method returns: Observables, streams, async iterables, @Res().
import { AsyncResource } from 'node:async_hooks';
import { finished } from 'node:stream';
import { isObservable, Observable } from 'rxjs';

/**
 * A locked method's result that is consumed after the method returns: an Observable, a stream
 * (a Node Readable, or Nest's StreamableFile), an async iterable (async generator). The lock
 * must stay held until it has finished, not until the method returned. `value` is what the
 * caller gets (the same stream; an Observable or iterable that runs its producer in the lock's
 * async context, so re-entry works, and streams values without buffering them); `done` settles
 * when the result has finished (completed, errored, ended, closed, unsubscribed, returned).
 * Any other value is done at once. The hold (distributed-lock.hold.ts) waits for `done`.
 */
export interface HeldResult {
  value: unknown;
  /** Undefined for a value that is complete when returned (nothing to wait for). */
  done?: Promise<void>;
}

export function holdUntilDone(result: unknown): HeldResult {
  if (isObservable(result)) return holdObservable(result);
  const stream = streamOf(result);
  if (stream) return { value: result, done: whenFinished(stream) };
  if (isAsyncIterable(result)) return holdIterable(result);
  return { value: result };
}

/** An HTTP response the method writes itself (`@Res()`): done once it has been sent or closed. */
export function whenResponseSent(response: unknown): Promise<void> | undefined {
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
  const subscribe = AsyncResource.bind((subscriber: import('rxjs').Subscriber<unknown>) =>
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
