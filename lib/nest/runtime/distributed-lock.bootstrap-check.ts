// Owns the bootstrap failure of an application with decorated classes and no ZkLockModule.
import { ZkLockError } from '../../core/errors';
import { injectedLockService, lockServiceHint } from './distributed-lock.wrapper';

/** What a decorator needs Nest to have injected, and how to tell (LockService by default). */
export interface InjectedService {
  readonly decorator: string;
  injected(instance: object): boolean;
}

const LOCK_SERVICE: InjectedService = {
  decorator: '@DistributedLock',
  injected: (instance) => !!injectedLockService(instance),
};

/**
 * Makes the application's bootstrap fail, naming the method, when Nest created an instance of a
 * class with `@DistributedLock` methods without a LockService because the application has no
 * ZkLockModule (instead of the first call failing; a module that cannot see one is found
 * earlier, by distributed-lock.explorer.ts, which closes the session it opened). Nest
 * calls `onApplicationBootstrap` on every singleton provider and controller after every module's
 * `onModuleInit`; a class's own hook still runs after the check. Request-scoped and transient
 * instances get no lifecycle hooks: their first call fails with the same advice.
 */
export function checkModuleAtBootstrap(
  prototype: object,
  where: string,
  owner: string,
  service: InjectedService = LOCK_SERVICE,
): void {
  const target = prototype as Record<string | symbol, unknown>;
  const checked = Symbol.for(`zk-lock:bootstrap-check:${service.decorator}`);
  if (Object.prototype.hasOwnProperty.call(target, checked)) return;
  target[checked] = true;
  const own = target.onApplicationBootstrap as ((...args: unknown[]) => unknown) | undefined;
  target.onApplicationBootstrap = function (this: object, ...args: unknown[]): unknown {
    if (!service.injected(this)) {
      throw new ZkLockError(
        `${service.decorator} on ${where}: this application has no ZkLockModule. ` +
          lockServiceHint(owner),
      );
    }
    return own?.apply(this, args);
  };
}
