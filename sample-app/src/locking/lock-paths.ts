import { encodePathSegment, LockService } from 'nestjs-zookeeper-lock';

/** Same paths as the `@DistributedLock` templates build (values encoded into one segment). */
export const productLockPath = (productId: string): string =>
  `/locks/product:${encodePathSegment(productId)}`;

export const orderLockPath = (orderId: number): string =>
  `/locks/order:${encodePathSegment(orderId)}`;

/**
 * The fencing token of a lock that a `@DistributedLock` method of this async context holds.
 * Re-entering a held lock costs no ZooKeeper traffic and gives the same token.
 */
export async function heldFencingToken(locks: LockService, path: string): Promise<bigint> {
  if (!locks.isHeld(path)) {
    throw new Error(`Expected to hold lock "${path}" here; check the @DistributedLock template.`);
  }
  const lock = await locks.acquire(path);
  try {
    return lock.fencingToken;
  } finally {
    await lock.release();
  }
}
