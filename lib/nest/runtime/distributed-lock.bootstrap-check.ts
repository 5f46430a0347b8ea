// Owns the bootstrap failure of an application with decorated classes and no ZkLockModule.
import { ZkLockError } from '../../core/errors';
import { injectedLockService, lockServiceHint } from './lock-service.injection';

const CHECKED = Symbol('zk-lock:bootstrap-check');

/**
 * Makes the application's bootstrap fail, naming the method, when Nest created an instance of a
 * class with `@DistributedLock` methods without a LockService because the application has no
 * ZkLockModule (instead of the first call failing; a module that cannot see one is found
 * earlier, by distributed-lock.explorer.ts, which closes the session it opened). Nest
 * calls `onApplicationBootstrap` on every singleton provider and controller after every module's
 * `onModuleInit`; a class's own hook still runs after the check. Request-scoped and transient
 * instances get no lifecycle hooks: their first call fails with the same advice.
 */
export function checkModuleAtBootstrap(prototype: object, where: string, owner: string): void {
  const target = prototype as Record<string | symbol, unknown>;
  if (Object.prototype.hasOwnProperty.call(target, CHECKED)) return;
  target[CHECKED] = true;
  const own = target.onApplicationBootstrap as ((...args: unknown[]) => unknown) | undefined;
  target.onApplicationBootstrap = function (this: object, ...args: unknown[]): unknown {
    if (!injectedLockService(this)) {
      throw new ZkLockError(
        `@DistributedLock on ${where}: this application has no ZkLockModule. ` +
          lockServiceHint(owner),
      );
    }
    return own?.apply(this, args);
  };
}
