// The handles callers get for a held lock: read-only views, and the owner's handle with release().
import { LockLostError } from '../errors';
import type { HeldLock } from '../engine/held-lock';
import type { LockHandle, LockState, LockView } from '../types';

/**
 * A held lock as its owner's code sees it through `heldLock(path)`: token, signal, state and
 * events, but no release and no hold count of its own, so reading it never keeps the lock.
 * LockHandleView adds release() on top.
 */
export class ReadOnlyLockView implements LockView {
  constructor(protected readonly lock: HeldLock) {}

  get path(): string {
    return this.lock.path;
  }
  get fencingToken(): bigint {
    return this.lock.fencingToken;
  }
  get signal(): AbortSignal {
    return this.lock.signal;
  }
  get state(): LockState {
    return this.lock.state;
  }

  assertHeld(): void {
    this.lock.assertHeld();
  }

  watchForLoss(): AbortSignal {
    return this.lock.watchForLoss();
  }

  on(event: string, listener: (...args: any[]) => void): this {
    this.lock.on(event, listener);
    return this;
  }

  off(event: string, listener: (...args: any[]) => void): this {
    this.lock.off(event, listener);
    return this;
  }
}

/** What the caller gets: one acquisition of a HeldLock; release is idempotent per handle. */
export class LockHandleView extends ReadOnlyLockView implements LockHandle {
  private released = false;
  private releasing?: Promise<void>;

  /** @internal the shared record (for owner scopes). */
  get heldLock(): HeldLock {
    return this.lock;
  }

  /** 'released' once this handle is released (unless lost), even while a re-entry still holds. */
  override get state(): LockState {
    return this.released && this.lock.state !== 'lost' ? 'released' : this.lock.state;
  }

  override assertHeld(): void {
    if (this.released && this.lock.state !== 'lost') {
      throw new LockLostError(this.path, 'released', 'this handle was released');
    }
    this.lock.assertHeld();
  }

  release(): Promise<void> {
    if (!this.released) {
      this.released = true;
      // Set before exit() runs: it may tell a loss (the 'lost' event, the signal) whose listener
      // calls release() again, and gets this same promise.
      let exited!: (exit: Promise<void>) => void;
      this.releasing = new Promise<void>((resolve) => (exited = resolve));
      try {
        exited(this.lock.exit());
      } catch (err) {
        exited(Promise.reject(err));
      }
    }
    return this.releasing!;
  }
}
