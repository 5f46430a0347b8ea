// Owns the keys of what @DistributedLock records (the decorator writes), and the one accessor.
import type { DistributedLockSpec } from './distributed-lock.options';

/** Metadata on a decorated method: its `DistributedLockSpec`. */
export const DISTRIBUTED_LOCK_METADATA = 'zk-lock:distributed-lock';

/** Metadata on a class that has at least one `@DistributedLock` method. */
export const DISTRIBUTED_LOCK_CLASS_METADATA = 'zk-lock:distributed-lock-class';

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

/** The spec of each `@DistributedLock` method of an instance (its class and ancestors). */
export function lockSpecsOf(instance: object): DistributedLockSpec[] {
  const found: DistributedLockSpec[] = [];
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== Object.prototype;) {
    for (const key of Reflect.ownKeys(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, key);
      const spec = lockSpecOf(descriptor?.value);
      if (spec) found.push(spec);
    }
    proto = Object.getPrototypeOf(proto);
  }
  return found;
}
