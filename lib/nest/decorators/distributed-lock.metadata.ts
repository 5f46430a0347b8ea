import type { DistributedLockSpec } from './distributed-lock.options';
import {
  DISTRIBUTED_LOCK_CLASS_METADATA,
  DISTRIBUTED_LOCK_METADATA,
} from '../module/zk-lock.constants';

/**
 * The one accessor of what `@DistributedLock` records: the spec on each decorated method, and a
 * mark on each class that has one (so discovery can skip the others).
 */
export function recordLockSpec(owner: object, method: object, spec: DistributedLockSpec): void {
  Reflect.defineMetadata(DISTRIBUTED_LOCK_METADATA, spec, method);
  Reflect.defineMetadata(DISTRIBUTED_LOCK_CLASS_METADATA, true, owner);
}

/** The spec of a decorated method (a handler, a prototype's function), if it is one. */
export function lockSpecOf(method: unknown): DistributedLockSpec | undefined {
  if (typeof method !== 'function') return undefined;
  return Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, method) as DistributedLockSpec | undefined;
}

/** Whether an instance's class has `@DistributedLock` methods. */
export function hasLockedMethods(instance: unknown): instance is object {
  return (
    typeof instance === 'object' &&
    instance !== null &&
    Reflect.getMetadata(DISTRIBUTED_LOCK_CLASS_METADATA, instance.constructor) === true
  );
}

/** `Class.method` of each `@DistributedLock` method of an instance (its class and ancestors). */
export function lockedMethodsOf(instance: object): string[] {
  const found: string[] = [];
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== Object.prototype;) {
    for (const key of Reflect.ownKeys(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, key);
      const spec = lockSpecOf(descriptor?.value);
      if (spec) found.push(spec.where);
    }
    proto = Object.getPrototypeOf(proto);
  }
  return found;
}
