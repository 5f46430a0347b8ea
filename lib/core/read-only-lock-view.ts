import type { HeldLock } from './held-lock';
import type { LockState, LockView } from './types';

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

  on(event: string, listener: (...args: any[]) => void): this {
    this.lock.on(event, listener);
    return this;
  }

  off(event: string, listener: (...args: any[]) => void): this {
    this.lock.off(event, listener);
    return this;
  }
}
