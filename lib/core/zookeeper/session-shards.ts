// Which session of a pool a lock path uses: a stable hash of its recipe path.

/** The children a semaphore keeps under its path (Curator InterProcessSemaphoreV2's layout). */
const SEMAPHORE_CHILDREN = ['/locks', '/leases'];

/**
 * @internal
 * The path whose locks must share one session (docs/design.md "Sessions as a pool"): the lock
 * path itself, except a semaphore's `<path>/locks` mutex and `<path>/leases` node, which go with
 * `<path>`. A mutex, a read/write lock and an election on one path use that path already. A lock
 * of its own on a path ending in `/locks` or `/leases` goes with its parent too: that only picks
 * its session, which is harmless.
 */
export function recipePathOf(lockPath: string): string {
  for (const child of SEMAPHORE_CHILDREN) {
    if (lockPath.endsWith(child) && lockPath.length > child.length) {
      return lockPath.slice(0, -child.length);
    }
  }
  return lockPath;
}

/**
 * @internal
 * The index (0 to `sessions` - 1) of the session `lockPath` uses: FNV-1a (32 bits) of its recipe
 * path's UTF-8 bytes. The same in every process and release, so a path's session never depends
 * on the order locks were taken in.
 */
export function sessionIndexOf(lockPath: string, sessions: number): number {
  if (sessions <= 1) return 0;
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(recipePathOf(lockPath), 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % sessions;
}
