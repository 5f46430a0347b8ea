// Owner scopes: the locks an async context holds, so its code re-enters them.
import type { LockLostError } from '../errors';
import type { HeldLock } from '../queue/held-lock';

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
  readonly held: Map<string, HeldLock>;

  constructor(parent?: OwnerScope) {
    this.held = new Map(parent?.held);
  }

  active(path: string): HeldLock | undefined {
    const lock = this.held.get(path);
    return lock?.active ? lock : undefined;
  }

  /** The loss of `path`'s lock if this scope lost it and still holds it (see HeldLock). */
  lost(path: string): LockLostError | undefined {
    return this.held.get(path)?.lostWhileHeld;
  }
}
