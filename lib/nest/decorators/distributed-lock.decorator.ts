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
 * Holds a distributed lock while the method runs (a handler: after guards, interceptors, pipes).
 * `'/locks/order:<id>'`: `<id>` is the parameter of that name, else the argument
 * `@Param('id')`/`@Body('id')`/`@Payload('id')` binds, else a field of the whole body (fixed at
 * decoration); `<0.orderId>` by position; `<params.id>`, `<query.x>`, `<body.a>` read the HTTP
 * request. A function is called with the arguments; several paths are held all or none.
 * Options: `waitTimeoutMs`, `mode` ('read' | 'write'), `onBusy`, `minHoldMs`. The result becomes
 * a Promise; an Observable, stream or async iterable holds the lock until it has finished.
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
