import { ZkLockError } from '../core/errors';
import type { LockService } from './lock.service';

const byInstance = new WeakMap<object, LockService>();
const live = new Set<LockService>();

/** Called by LockService: the application's providers with decorated methods use this service. */
export function registerLockService(service: LockService, instances: Iterable<object>): void {
  live.add(service);
  for (const instance of instances) byInstance.set(instance, service);
}

/** Whether a ZkLockModule of this process is running (its LockService initialised). */
export function hasLiveLockService(): boolean {
  return live.size > 0;
}

export function unregisterLockService(service: LockService): void {
  live.delete(service);
}

/**
 * The LockService of the application that created `instance`. An instance created outside
 * discovery (transient, request-scoped, `new`) falls back to the only live LockService.
 */
export function lockServiceFor(instance: unknown, where: string): LockService {
  const bound = typeof instance === 'object' && instance ? byInstance.get(instance) : undefined;
  if (bound && live.has(bound)) return bound;
  if (live.size === 1) return live.values().next().value as LockService;
  if (live.size === 0) {
    throw new ZkLockError(
      `@DistributedLock on ${where} found no running ZkLockModule. Import ZkLockModule.forRoot() ` +
        'in the application and call app.init() (or app.listen()) before calling the method.',
    );
  }
  throw new ZkLockError(
    `@DistributedLock on ${where} cannot tell which of ${live.size} running ZkLockModules to use ` +
      'for an instance Nest did not create at bootstrap. Create it through Nest (a singleton provider).',
  );
}
