// Owns a decorated method's call: the wrapper in its place (the one place a lock is taken) and
// the interceptor that hands it a handler call's request.
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
 * The wait of a route handler when neither its decorator nor the module sets one
 * (docs/reference/options.md "Waits"). Not forever: an HTTP client or the proxy in front gives
 * up after a while (60 s is the common default of nginx, AWS ALB and many clients), and a wait
 * that outlives the request runs the handler for nobody, its lock turn taken from the requests
 * still waiting. 30 s answers the client a 409 it can act on before its own timeout, and is far
 * above a lock turn of a well-behaved handler.
 */
export const ROUTE_HANDLER_WAIT_MS = 30_000;

/**
 * The method that replaces a decorated one, for every caller: a route, message or resolver
 * handler (after guards, interceptors and pipes: the arguments are the piped values), a job, or
 * plain code (docs/design.md "One acquire, file by file"). It finds the instance's
 * LockService, resolves the lock path and hands the call to the hold (distributed-lock.hold.ts).
 * Its result is always a Promise.
 */
export function lockedMethod(original: AnyMethod, spec: DistributedLockSpec): AnyMethod {
  const wrapper = function (this: unknown, ...args: unknown[]): Promise<unknown> {
    try {
      const current = handlerCalls.getStore();
      const request = current?.handler === wrapper ? current.request : undefined;
      const locks = lockServiceOf(this, spec.where, spec.owner);
      const path = resolveMethodPath(spec, args, request);
      const waitTimeoutMs =
        spec.options.waitTimeoutMs ??
        locks.defaultWaitTimeoutMs ??
        (request ? ROUTE_HANDLER_WAIT_MS : undefined);
      const handlerCall = request !== undefined;
      return holdCall({
        spec,
        locks,
        path,
        waitTimeoutMs,
        method: original,
        self: this,
        args,
        handlerCall,
      });
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return wrapper;
}

/**
 * Applied by `@DistributedLock` to every decorated method; on a handler call it does not lock
 * (the method's wrapper does, after the pipes): it hands the call's HTTP request to the wrapper
 * for the template's `<params.x>`, `<query.x>` and `<body.x>`, and maps lock errors to the
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
 * The HTTP request of the handler call running now, recorded by DistributedLockInterceptor
 * above for the template's `<params.x>`, `<query.x>`, `<body.x>`. Nest calls the handler with
 * the piped arguments only, so the request travels beside them. Keyed by the handler, so a
 * decorated service called from inside it does not read it; written and read in this file only.
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
