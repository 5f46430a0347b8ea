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
 * Fails the bootstrap, naming the method, when an application without any ZkLockModule created
 * a decorated instance (a module that cannot see one fails earlier: distributed-lock.explorer.ts).
 * It hooks `onApplicationBootstrap`, which runs after every `onModuleInit`; the class's own hook
 * still runs. Request-scoped and transient instances get no hooks: their first call fails.
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
