// Owns how a decorated method reaches its LockService (and, through the same helpers, a
// @LeaderElection method its LeaderElectionService): a property Nest injects.
import { Inject, Optional, type Type } from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants';
import { ZkLockError } from '../../core/errors';
import { LockService } from './lock.service';

/** Where Nest puts the LockService of a class with `@DistributedLock` methods. */
const LOCK_SERVICE = Symbol('zk-lock:lock-service');

/**
 * The one way a decorated method reaches its LockService: Nest injects, into every instance it
 * creates of a class with `@DistributedLock` methods, the LockService that class's module sees
 * (the one a `private readonly locks: LockService` constructor parameter would get). So the
 * method locks through the same client as the class's `locks.current()` and `locks.isHeld()`.
 * Optional, so that a module that cannot see it fails at bootstrap with our message naming the
 * method (distributed-lock.bootstrap-check.ts), not with Nest's generic one.
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
export function lockServiceOf(instance: unknown, where: string, owner: string): LockService {
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
 * once per class. Optional, so that a module that cannot see it fails at bootstrap with our
 * message naming the method, not with Nest's generic one.
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
