import {
  INTERCEPTORS_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { Logger, UseInterceptors } from '@nestjs/common';
import { InvalidLockPathError, LockTimeoutError, ZkLockError } from '../../core/errors';
import { DistributedLockInterceptor } from '../runtime/distributed-lock.interceptor';
import type { DistributedLockOptions, DistributedLockSpec } from './distributed-lock.options';
import { parseKeyTemplate } from '../runtime/key-template';
import { injectLockService, lockServiceOf } from '../runtime/lock-service.injection';
import { copyMethodMetadata } from './distributed-lock.copy-metadata';
import { resolveMethodPath } from '../runtime/key-template.resolver';
import { runHeld } from '../runtime/distributed-lock.held-result';
import { callHold, checkOnBusy, SKIPPED, skippedValue } from '../runtime/distributed-lock.on-busy';
import { parameterNames } from '../runtime/key-template.parameter-names';
import { requestOf } from '../runtime/distributed-lock.call-context';
import { templateSources } from '../runtime/key-template.sources';
import { checkModuleAtBootstrap } from '../runtime/distributed-lock.bootstrap-check';
import { recordLockSpec } from './distributed-lock.metadata';
import {
  metricsTemplateOf,
  runWithMetricsTemplate,
} from '../runtime/distributed-lock.metrics-label';

type AnyMethod = (...args: any[]) => unknown;

/** Wrapper -> the user's method, so stacked decorators still see its parameter names. */
const innermost = new WeakMap<AnyMethod, AnyMethod>();
/** A method decorator; for the function form, the method's arguments must fit the function's. */
type MethodDecoratorFor<P extends unknown[]> = <T extends AnyMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<T> &
    (Parameters<T> extends [...P, ...any[]] ? unknown : never),
) => TypedPropertyDescriptor<T>;

/**
 * Holds a distributed lock while the method runs (on a handler call: after guards, interceptors
 * and pipes; the wrapper below is the one place locks are taken).
 * - `'/locks/order:<id>'`: `<id>` is the method's parameter of that name (after pipes), else the
 *   argument a decorator binds to that name (`@Param('id')`, `@Body('id')`, `@Payload('id')`),
 *   else a field of its whole `@Body()`/`@Payload()`; fixed at decoration (key-template.sources.ts),
 *   so a request cannot steer it. `<0>`, `<0.orderId>`: by position. `<params.id>`,
 *   `<query.x>`, `<body.a.0.b>`: that part of the HTTP request of a handler call.
 * - `(id: string) => \`/locks/order:${id}\``: called with the method's arguments; a function that
 *   returns several paths holds them all (the multi-path lock: one canonical order, all or none).
 * Options: `waitTimeoutMs`, `mode: 'read' | 'write'` (one side of the read/write lock; default
 * the mutex), `onBusy`, `minHoldMs`; `@DistributedSemaphore` sets `maxLeases` (and `leases`).
 * Template values are encoded into one path segment. The method's result becomes a Promise; a
 * returned Observable, stream or async iterable holds the lock until it has finished.
 */
export function DistributedLock(
  template: string,
  options?: DistributedLockOptions,
): MethodDecoratorFor<any[]>;
export function DistributedLock<P extends unknown[]>(
  template: (...args: P) => string | string[],
  options?: DistributedLockOptions,
): MethodDecoratorFor<P>;
export function DistributedLock(
  template: string | ((...args: any[]) => string | string[]),
  options: DistributedLockOptions = {},
): MethodDecoratorFor<any[]> {
  return (target, key, descriptor) => {
    const owner = typeof target === 'function' ? target : target.constructor;
    const where = `${owner.name}.${String(key)}`;
    const original = descriptor.value as AnyMethod | undefined;
    const spec = createSpec(template, options, where, original);
    spec.responseArg = responseArgument(owner, key);
    const names = parameterNames(innermost.get(original!) ?? original!);
    if (spec.template) spec.sources = templateSources(spec.template, owner, key, names, where);
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, key);
    const metricsTemplate = metricsTemplateOf(spec);
    // The one place the lock is taken, for every caller: a route, message or resolver handler
    // (after guards, interceptors and pipes: the arguments are the piped values), a job, or
    // plain code. The interceptor only records the request of a handler call (distributed-lock.call-context.ts).
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      try {
        const locks = lockServiceOf(this, where, owner.name);
        const request = requestOf(wrapper);
        const path = resolveMethodPath(spec, args, names, request);
        const waitTimeoutMs =
          options.waitTimeoutMs ??
          locks.defaultWaitTimeoutMs ??
          (request ? ROUTE_HANDLER_WAIT_MS : undefined);
        // The lock is held until the result has been consumed (Observable, stream, async
        // iterable) and a response the method writes itself (@Res()) has been sent.
        const response = spec.responseArg === undefined ? undefined : args[spec.responseArg];
        const { withLock, linger } = callHold(locks, spec, path, { waitTimeoutMs });
        // A route handler answers 503 as soon as its lock is lost (docs/nestjs/transports-and-errors.md).
        const onLostBeforeResult = request
          ? (reason: unknown) => logLost(where, path, reason)
          : undefined;
        const held = runWithMetricsTemplate(metricsTemplate, () =>
          runHeld(withLock, () => original!.apply(this, args), {
            response,
            linger,
            onLostBeforeResult,
          }),
        );
        return held.then(
          (value) => (value === SKIPPED ? skippedValue(returnType) : value),
          (err: unknown) => Promise.reject(withDecoratorAdvice(err, where)),
        );
      } catch (err) {
        return Promise.reject(err);
      }
    };
    copyMethodMetadata(original!, wrapper);
    innermost.set(wrapper, innermost.get(original!) ?? original!);
    recordLockSpec(owner, wrapper, spec);
    if (typeof target !== 'function') {
      injectLockService(target);
      checkModuleAtBootstrap(target, where, owner.name);
    }
    descriptor.value = wrapper as typeof descriptor.value;
    const interceptors: unknown[] = Reflect.getMetadata(INTERCEPTORS_METADATA, wrapper) ?? [];
    if (!interceptors.includes(DistributedLockInterceptor)) {
      UseInterceptors(DistributedLockInterceptor)(target, key, descriptor);
    }
    return descriptor;
  };
}

const logger = new Logger('DistributedLock');

/**
 * The wait of a route handler when neither its decorator nor the module sets one
 * (docs/reference/options.md "Waits"). Not forever: an HTTP client or the proxy in front gives
 * up after a while (60 s is the common default of nginx, AWS ALB and many clients), and a wait
 * that outlives the request runs the handler for nobody, its lock turn taken from the requests
 * still waiting. 30 s answers the client a 409 it can act on before its own timeout, and is far
 * above a lock turn of a well-behaved handler.
 */
export const ROUTE_HANDLER_WAIT_MS = 30_000;

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
  const mapped = new LockTimeoutError(err.path, err.waitTimeoutMs, err.ahead, advice, {
    cause: err,
  });
  advised.add(mapped);
  return mapped;
}

function logLost(where: string, path: string | string[], reason: unknown): void {
  logger.error(
    `${where} lost lock "${[path].flat().join('", "')}" while running; answering 503: ` +
      (reason instanceof Error ? reason.message : String(reason)),
  );
}

/** The index of a `@Res()` argument the handler answers through itself (no passthrough). */
function responseArgument(owner: object, key: string | symbol): number | undefined {
  const args: Record<string, { index: number }> =
    Reflect.getMetadata(ROUTE_ARGS_METADATA, owner, key) ?? {};
  if (Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, owner, key)) return undefined;
  const entry = Object.entries(args).find(
    ([k]) => k.split(':')[0] === `${RouteParamtypes.RESPONSE}`,
  );
  return entry?.[1].index;
}

/** `mode`, `maxLeases` and `leases` that cannot work fail when the class is defined. */
function checkKind(options: DistributedLockOptions, where: string): void {
  const { mode, maxLeases, leases } = options;
  if (mode !== undefined && mode !== 'read' && mode !== 'write') {
    throw new ZkLockError(
      `@DistributedLock on ${where}: mode must be 'read' or 'write' (got ${JSON.stringify(mode)}); ` +
        'leave it out for the mutex.',
    );
  }
  if (maxLeases === undefined) return;
  if (mode !== undefined) {
    throw new ZkLockError(`@DistributedSemaphore on ${where}: a semaphore has no read/write mode.`);
  }
  if (!Number.isInteger(maxLeases) || maxLeases < 1) {
    throw new ZkLockError(
      `@DistributedSemaphore on ${where}: maxLeases must be an integer >= 1 (got ${String(maxLeases)}).`,
    );
  }
  const n = leases ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > maxLeases) {
    throw new ZkLockError(
      `@DistributedSemaphore on ${where}: leases must be an integer from 1 to maxLeases (${maxLeases}), got ${String(leases)}.`,
    );
  }
}

function createSpec(
  template: unknown,
  options: DistributedLockOptions,
  where: string,
  original: unknown,
): DistributedLockSpec {
  if (typeof original !== 'function') {
    throw new ZkLockError(`@DistributedLock decorates methods only; ${where} is not a method.`);
  }
  const wait = options.waitTimeoutMs;
  if (wait !== undefined && !(Number.isFinite(wait) && wait >= 0)) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: waitTimeoutMs must be a number >= 0 (got ${String(wait)}); ` +
        'leave it out to wait until the lock is free.',
    );
  }
  checkKind(options, where);
  checkOnBusy(options, where);
  if (typeof template === 'function') {
    return { where, pathFn: template as (...args: any[]) => string, options };
  }
  if (typeof template !== 'string') {
    throw new InvalidLockPathError(
      String(template),
      `@DistributedLock on ${where} needs a path template string or a function`,
    );
  }
  const parsed = parseKeyTemplate(template, where);
  if (parsed.expanding && (options.mode || options.maxLeases !== undefined)) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: "<${parsed.expanding.raw}>" locks several paths at once ` +
        '(the multi-path lock), which has no read/write mode or semaphore; remove the "*" or the option.',
    );
  }
  return { where, template: parsed, options };
}
