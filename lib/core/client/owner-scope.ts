// Owner scopes: the locks an async context holds, so its code re-enters them.
import { LockModeError } from '../errors';
import type { LockLostError } from '../errors';
import type { HeldLock } from '../engine/held-lock';

/** Owner-scope key of a hold: the lock path, plus the side for a read/write lock. */
export function ownerKey(lockPath: string, kind: 'mutex' | 'read' | 'write'): string {
  return kind === 'mutex' ? lockPath : `${lockPath}\u0000${kind}`;
}

/**
 * The locks an async execution context owns (kept in AsyncLocalStorage). A new scope starts
 * from a copy of its parent's, so nested code sees the outer locks and can re-enter them, while
 * siblings that started before an acquisition do not.
 */
export class OwnerScope {
  private readonly held: Map<string, HeldLock>;

  /** A scope with its parent's locks and `locks` (the ones withLock just took). */
  constructor(parent?: OwnerScope, locks: readonly HeldLock[] = []) {
    this.held = new Map(parent?.held);
    for (const lock of locks) this.held.set(ownerKey(lock.lockPath, lock.kind), lock);
  }

  active(path: string): HeldLock | undefined {
    const lock = this.held.get(path);
    return lock?.active ? lock : undefined;
  }

  /**
   * The loss of a lock of `lockPath` this scope lost and still holds (see HeldLock), on the side
   * `kind` takes or, for a read/write lock, the other one: a read in a lost write's scope would
   * re-enter it (a downgrade), a write in a lost read's scope would wait for it (an upgrade).
   */
  private lost(lockPath: string, kind: 'mutex' | 'read' | 'write'): LockLostError | undefined {
    const kinds = kind === 'mutex' ? (['mutex'] as const) : (['read', 'write'] as const);
    for (const side of kinds) {
      const lost = this.held.get(ownerKey(lockPath, side))?.lostWhileHeld;
      if (lost) return lost;
    }
    return undefined;
  }

  /**
   * What a take of `lockPath` (namespace applied; `path` as the caller named it) as `kind` does
   * in this scope: re-enter a lock it holds, fail at once, or (undefined) wait in the queue.
   */
  decide(
    lockPath: string,
    path: string,
    kind: 'mutex' | 'read' | 'write',
  ): { reenter: HeldLock } | { fail: Error } | undefined {
    const key = ownerKey(lockPath, kind);
    // A read in a scope that holds the write lock re-enters it (a downgrade: the write node
    // stays until both are released, so no writer queued behind it can get in meanwhile).
    const held =
      this.active(key) ?? (kind === 'read' ? this.active(ownerKey(lockPath, 'write')) : undefined);
    if (held) return { reenter: held };
    // This scope lost this lock but still holds its place here: a take would wait for itself
    // (its node may outlive the loss) or be granted a fresh lock beside the one it lost, so it
    // fails as re-entering the lost lock would (docs/design.md "What holding means").
    const lost = this.lost(lockPath, kind);
    if (lost) return { fail: lost };
    if (kind === 'write' && this.active(ownerKey(lockPath, 'read'))) {
      return {
        fail: new LockModeError(
          path,
          'this scope holds its read lock, and a write lock would wait for that read lock forever',
          'Release the read lock first, or take the write lock from the start (a write lock can be downgraded to a read lock, not upgraded)',
        ),
      };
    }
    return undefined;
  }
}
