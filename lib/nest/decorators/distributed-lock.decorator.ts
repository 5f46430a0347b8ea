// Owns @DistributedLock: builds the method's frozen spec, records it, and wraps the method once.
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { UseInterceptors } from '@nestjs/common';
import { checkModuleAtBootstrap } from '../runtime/distributed-lock.bootstrap-check';
import {
  DistributedLockInterceptor,
  injectLockService,
  lockedMethod,
} from '../runtime/distributed-lock.wrapper';
import { copyMethodMetadata } from './distributed-lock.copy-metadata';
import {
  DISTRIBUTED_LOCK_CLASS_METADATA,
  DISTRIBUTED_LOCK_METADATA,
} from './distributed-lock.metadata';
import type { DistributedLockOptions } from './distributed-lock.options';
import { buildLockSpec } from './distributed-lock.spec-builder';

type AnyMethod = (...args: any[]) => unknown;

/** A method decorator; for the function form, the method's arguments must fit the function's. */
type MethodDecoratorFor<P extends unknown[]> = <T extends AnyMethod>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<T> &
    (Parameters<T> extends [...P, ...any[]] ? unknown : never),
) => TypedPropertyDescriptor<T>;

/**
 * Holds a distributed lock while the method runs (on a handler call: after guards, interceptors
 * and pipes; its wrapper, runtime/distributed-lock.wrapper.ts, is the one place locks are taken).
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
    const spec = buildLockSpec(template, options, target, key, descriptor.value);
    const original = descriptor.value as AnyMethod;
    const wrapper = lockedMethod(original, spec);
    const onPrototype = typeof target !== 'function';
    if (onPrototype) injectLockService(target);
    copyMethodMetadata(original, wrapper);
    // What it records: the spec on the method, a mark on the class (discovery skips the others).
    Reflect.defineMetadata(DISTRIBUTED_LOCK_METADATA, spec, wrapper);
    const owner: object = onPrototype ? target.constructor : target;
    Reflect.defineMetadata(DISTRIBUTED_LOCK_CLASS_METADATA, true, owner);
    if (onPrototype) checkModuleAtBootstrap(target, spec.where, spec.owner);
    descriptor.value = wrapper as typeof descriptor.value;
    const interceptors: unknown[] = Reflect.getMetadata(INTERCEPTORS_METADATA, wrapper) ?? [];
    if (!interceptors.includes(DistributedLockInterceptor)) {
      UseInterceptors(DistributedLockInterceptor)(target, key, descriptor);
    }
    return descriptor;
  };
}
