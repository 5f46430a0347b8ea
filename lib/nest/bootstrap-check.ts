import { ZkLockError } from '../core/errors';
import { injectedLockService } from './lock-service.property';
import { hasLiveLockService } from './lock-service.registry';

const CHECKED = Symbol('zk-lock:bootstrap-check');

/**
 * Makes the application's bootstrap fail, naming the method, when a class with
 * `@DistributedLock` methods runs in an application without ZkLockModule (instead of the first
 * call failing). Nest calls `onApplicationBootstrap` on every provider and controller after
 * every module's `onModuleInit`, where the LockService registers itself; a class's own hook
 * still runs after the check.
 */
export function checkModuleAtBootstrap(prototype: object, where: string): void {
  const target = prototype as Record<string | symbol, unknown>;
  if (Object.prototype.hasOwnProperty.call(target, CHECKED)) return;
  target[CHECKED] = true;
  const own = target.onApplicationBootstrap as ((...args: unknown[]) => unknown) | undefined;
  target.onApplicationBootstrap = function (this: object, ...args: unknown[]): unknown {
    if (!injectedLockService(this) && !hasLiveLockService()) {
      throw new ZkLockError(
        `@DistributedLock on ${where}: this application has no ZkLockModule. Import ` +
          'ZkLockModule.forRoot({ connectionString }) (or ZkLockModule.forTest() in unit tests) ' +
          'in the module of this class or with isGlobal: true.',
      );
    }
    return own?.apply(this, args);
  };
}
