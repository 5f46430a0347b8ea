import { Inject, Optional } from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants';
import { LockService } from './lock.service';

/** Where Nest puts the LockService of a class with `@DistributedLock` methods. */
const LOCK_SERVICE = Symbol('zk-lock:lock-service');

/**
 * Asks Nest to inject, into every instance of `owner`, the LockService its own module sees:
 * the one a `private readonly locks: LockService` parameter of the class gets. So the method
 * locks through the same client as the class's `locks.current()` and `locks.isHeld()`, even
 * when ZkLockModule.forRoot() is imported more than once. Optional: a module that cannot see
 * LockService falls back to the registry.
 */
export function injectLockService(prototype: object): void {
  const owner = prototype.constructor;
  const deps: { key: unknown }[] = Reflect.getMetadata(PROPERTY_DEPS_METADATA, owner) ?? [];
  if (deps.some((dep) => dep.key === LOCK_SERVICE)) return;
  Optional()(prototype, LOCK_SERVICE);
  Inject(LockService)(prototype, LOCK_SERVICE);
}

/** The LockService Nest injected into `instance`, if any. */
export function injectedLockService(instance: unknown): LockService | undefined {
  if (typeof instance !== 'object' || instance === null) return undefined;
  const locks = (instance as Record<symbol, unknown>)[LOCK_SERVICE];
  return locks instanceof LockService ? locks : undefined;
}
