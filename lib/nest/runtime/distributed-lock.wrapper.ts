// Owns a decorated method's call: the wrapper in its place (the one place a lock is taken), the
// interceptor that tells it a handler call, with its request, and how it reaches its LockService.
import {
  CallHandler,
  ExecutionContext,
  Inject,
  Injectable,
  NestInterceptor,
  Optional,
  type Type,
} from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Observable, catchError, throwError } from 'rxjs';
import { ZkLockError } from '../../core/errors';
import { DISTRIBUTED_LOCK_METADATA } from '../decorators/distributed-lock.metadata';
import type { DistributedLockSpec } from '../decorators/distributed-lock.options';
import { toTransportError } from '../errors/lock-errors.transport';
import { holdCall } from './distributed-lock.hold';
import { resolveMethodPath, type RequestSources } from './key-template.resolver';
import { LockService } from './lock.service';

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
 * Applied by `@DistributedLock` to every decorated method; it takes no lock (the wrapper does,
 * after the pipes). It tells the wrapper of a handler call (its wait then has an end) and its
 * HTTP request (for `<params.x>`, `<query.x>`, `<body.x>`), and maps lock errors to the
 * transport's answer: Nest applies no global LockErrorsInterceptor to WebSocket gateways.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    // A decorated handler carries its spec (or a copy, under a decorator that wraps it again).
    if (!Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, handler)) return next.handle();
    const type = context.getType();
    const request = type === 'http' ? context.switchToHttp().getRequest<object>() : undefined;
    return handleWithRequest(handler, request, next).pipe(
      catchError((error: unknown) => throwError(() => toTransportError(context, error))),
    );
  }
}

/**
 * The handler call running now (any transport) and its HTTP request, beside the piped arguments
 * Nest passes. Keyed by the handler: a decorated service it calls is no handler call and does
 * not read the request. Written and read in this file only.
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

/** Where Nest puts the LockService of a class with `@DistributedLock` methods. */
const LOCK_SERVICE = Symbol('zk-lock:lock-service');

/**
 * Asks Nest to inject, into every instance it creates of the class, the LockService its module
 * sees (as a constructor parameter would get), so the method locks through the same client as
 * the class's `locks.current()`. Optional: a module that cannot see one fails at bootstrap with
 * our message naming the method (distributed-lock.bootstrap-check.ts, .explorer.ts).
 */
export function injectLockService(prototype: object): void {
  injectProperty(prototype, LOCK_SERVICE, LockService);
}

/** The LockService Nest injected into `instance`, if any. */
export function injectedLockService(instance: unknown): LockService | undefined {
  return injectedProperty(instance, LOCK_SERVICE, LockService);
}

/** What to do when a class's instances get no LockService (said at bootstrap and at a call). */
export function lockServiceHint(owner: string): string {
  return (
    'Import ZkLockModule.forRoot({ connectionString, isGlobal: true }) once in the application ' +
    '(or ZkLockTestingModule.forRoot() in unit tests), or import the module that provides it into the ' +
    `module of ${owner}; and let Nest create ${owner} (a provider, controller, resolver or ` +
    'gateway), not `new`.'
  );
}

/** The LockService of the instance a decorated method was called on, or a clear error. */
function lockServiceOf(instance: unknown, where: string, owner: string): LockService {
  const locks = injectedLockService(instance);
  if (locks) return locks;
  throw new ZkLockError(
    `@DistributedLock on ${where} was called on ${describe(instance, owner)}, which Nest gave no ` +
      `LockService. ${lockServiceHint(owner)}`,
  );
}

function describe(instance: unknown, owner: string): string {
  if (typeof instance !== 'object' || instance === null) {
    return 'no instance (the method was detached from its object: bind it, or call it on the instance)';
  }
  return `an instance of ${owner}`;
}

/**
 * Asks Nest to inject `token` into the `key` property of every instance of the prototype's class,
 * once per class; optional (the bootstrap checks say what is missing, naming the method).
 */
export function injectProperty(prototype: object, key: symbol, token: Type): void {
  const owner = prototype.constructor;
  const deps: { key: unknown }[] = Reflect.getMetadata(PROPERTY_DEPS_METADATA, owner) ?? [];
  if (deps.some((dep) => dep.key === key)) return;
  Optional()(prototype, key);
  Inject(token)(prototype, key);
}

/** What Nest injected into `instance`'s `key` property, if it is a `type`. */
export function injectedProperty<T>(
  instance: unknown,
  key: symbol,
  type: abstract new (...args: never[]) => T,
): T | undefined {
  if (typeof instance !== 'object' || instance === null) return undefined;
  const value = (instance as Record<symbol, unknown>)[key];
  return value instanceof type ? value : undefined;
}
