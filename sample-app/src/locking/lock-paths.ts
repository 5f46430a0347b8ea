import { encodePathSegment, LockService } from 'nestjs-zookeeper-lock';

/** Same paths as the `@DistributedLock` templates build (values encoded into one segment). */
export const productLockPath = (productId: string): string =>
  `/locks/product:${encodePathSegment(productId)}`;

export const orderLockPath = (orderId: number): string =>
  `/locks/order:${encodePathSegment(orderId)}`;

/**
 * The fencing token of the lock on `path` that a `@DistributedLock` method of this async context
 * holds. Fails loudly when it holds none: the template and `path` disagree.
 */
export function heldFencingToken(locks: LockService, path: string): bigint {
  const lock = locks.current(path);
  if (!lock) {
    throw new Error(`Expected to hold lock "${path}" here; check the @DistributedLock template.`);
  }
  return lock.fencingToken;
}
