// Owns a decorated method's call: the wrapper in its place (the one place a lock is taken) and
// the interceptor that tells it a handler call, with its request.
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Observable, catchError, throwError } from 'rxjs';
import { lockSpecOf } from '../decorators/distributed-lock.metadata';
import type { DistributedLockSpec } from '../decorators/distributed-lock.options';
import { toTransportError } from '../errors/lock-errors.transport';
import { holdCall } from './distributed-lock.hold';
import { resolveMethodPath, type RequestSources } from './key-template.resolver';
import { lockServiceOf } from './lock-service.injection';

type AnyMethod = (...args: any[]) => unknown;

/**
 * The method that replaces a decorated one, for every caller: a route, message or resolver
 * handler (after guards, interceptors and pipes: the arguments are the piped values), a job, or
 * plain code (docs/design.md "One lock, file by file"). It finds the instance's
 * LockService, resolves the lock path and hands the call to the hold (distributed-lock.hold.ts).
 * Its result is always a Promise.
 */
export function lockedMethod(original: AnyMethod, spec: DistributedLockSpec): AnyMethod {
  const wrapper = function (this: unknown, ...args: unknown[]): Promise<unknown> {
    try {
      const current = handlerCalls.getStore();
      // Nest called this method as the handler, on any transport (not a service it calls).
      const handlerCall = current?.handler === wrapper;
      const request = handlerCall ? current.request : undefined;
      const locks = lockServiceOf(this, spec.where, spec.owner);
      const path = resolveMethodPath(spec, args, request);
      // A handler call never waits without end: its caller may never give up, and would keep
      // its place among the path's maxWaitersPerPath (docs/reference/options.md "Waits").
      const waitTimeoutMs =
        spec.options.waitTimeoutMs ??
        locks.defaultWaitTimeoutMs ??
        (handlerCall ? locks.handlerWaitTimeoutMs : undefined);
      return holdCall({
        spec,
        locks,
        path,
        waitTimeoutMs,
        method: original,
        self: this,
        args,
        // An HTTP route answers a lost lock at once (503); the other transports as before.
        handlerCall: request !== undefined,
      });
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return wrapper;
}

/**
 * Applied by `@DistributedLock` to every decorated method; on a handler call it does not lock
 * (the method's wrapper does, after the pipes): it tells the wrapper that Nest calls it as a
 * handler, on any transport (its wait then has an end), hands it the call's HTTP request for
 * the template's `<params.x>`, `<query.x>` and `<body.x>`, and maps lock errors to the
 * transport's answer (lock-errors.transport.ts). The global LockErrorsInterceptor does the same
 * mapping for every handler, but Nest applies no global enhancer to WebSocket gateways: this
 * one still does there.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    if (!lockSpecOf(handler)) return next.handle();
    const type = context.getType();
    const request = type === 'http' ? context.switchToHttp().getRequest<object>() : undefined;
    return handleWithRequest(handler, request, next).pipe(
      catchError((error: unknown) => throwError(() => toTransportError(context, error))),
    );
  }
}

/**
 * The handler call running now (any transport) and its HTTP request, recorded by
 * DistributedLockInterceptor above: the wrapper gives a handler call's wait an end, and reads
 * the request for the template's `<params.x>`, `<query.x>`, `<body.x>`. Nest calls the handler
 * with the piped arguments only, so both travel beside them. Keyed by the handler, so a
 * decorated service called from inside it is no handler call and does not read the request;
 * written and read in this file only.
 */
const handlerCalls = new AsyncLocalStorage<{ handler: unknown; request?: RequestSources }>();

/** `next.handle()` of a call of `handler`, run with its request (undefined off HTTP). */
function handleWithRequest(
  handler: unknown,
  request: RequestSources | undefined,
  next: CallHandler,
): Observable<unknown> {
  // handle() is called and subscribed in the store's context: Nest binds the handler call to it.
  return new Observable<unknown>((subscriber) =>
    handlerCalls.run({ handler, request }, () => next.handle().subscribe(subscriber)),
  );
}
