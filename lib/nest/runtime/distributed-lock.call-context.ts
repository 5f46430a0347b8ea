import { AsyncLocalStorage } from 'node:async_hooks';

/** The parts of an HTTP request a template may name: `<params.id>`, `<query.x>`, `<body.a.b>`. */
export interface RequestSources {
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

/**
 * What the interceptor records for the one handler call it wraps: the handler (so a decorated
 * service called from inside it does not read the request) and, on HTTP, the request.
 */
export interface CallContext {
  handler: unknown;
  request?: RequestSources;
}

const calls = new AsyncLocalStorage<CallContext>();

export function runInCallContext<T>(context: CallContext, fn: () => T): T {
  return calls.run(context, fn);
}

/** The request of the handler call `handler` is running in, if it is that call. */
export function requestOf(handler: unknown): RequestSources | undefined {
  const context = calls.getStore();
  return context && context.handler === handler ? context.request : undefined;
}
