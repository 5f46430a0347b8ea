// Owns which session of a pool a lock path uses: a stable hash of its recipe path.

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
 * on the order locks were taken in. An ASCII character is its own UTF-8 byte, so the usual path
 * is hashed as it is; only a path with other characters is encoded (a Buffer) first.
 */
export function sessionIndexOf(lockPath: string, sessions: number): number {
  if (sessions <= 1) return 0;
  const path = recipePathOf(lockPath);
  let hash = FNV_OFFSET;
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (code > 0x7f) return fnv1a(Buffer.from(path, 'utf8')) % sessions;
    hash = Math.imul(hash ^ code, FNV_PRIME);
  }
  return (hash >>> 0) % sessions;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a (32 bits, unsigned) of `bytes`. */
function fnv1a(bytes: Uint8Array): number {
  let hash = FNV_OFFSET;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, FNV_PRIME);
  return hash >>> 0;
}
