import { EventEmitter } from 'node:events';
import { LockLossReason, LockLostError } from './errors';
import type { Contender } from './recipes/contender';
import type { LockHandle, LockState } from './types';

/** The process-side record of one held lock; shared by re-entrant handles of the same owner. */
export class HeldLock extends EventEmitter {
  state: LockState = 'held';
  count = 1;
  readonly acquiredAt = Date.now();
  readonly fencingToken: bigint;
  private readonly controller = new AbortController();

  constructor(
    readonly path: string,
    readonly contender: Contender,
    private readonly onExit: (lock: HeldLock) => Promise<void>,
    private readonly onLost: (lock: HeldLock, error: LockLostError) => void,
  ) {
    super();
    this.fencingToken = contender.fencingToken;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get active(): boolean {
    return this.state === 'held' || this.state === 'uncertain';
  }

  enter(): void {
    this.count++;
  }

  /** One owner's release; the node goes when the last re-entry is released. */
  exit(): Promise<void> {
    if (--this.count > 0) return Promise.resolve();
    if (this.state !== 'lost') this.state = 'released';
    return this.onExit(this);
  }

  lose(reason: LockLossReason, detail: string): void {
    if (this.state === 'lost' || this.state === 'released') return;
    this.state = 'lost';
    const error = new LockLostError(this.path, reason, detail);
    this.controller.abort(error);
    this.emit('lost', error);
    this.onLost(this, error);
  }

  suspend(): void {
    if (this.state !== 'held') return;
    this.state = 'uncertain';
    this.emit('uncertain');
  }

  resume(): void {
    if (this.state !== 'uncertain') return;
    this.state = 'held';
    this.emit('reconnected');
  }
}

/** What the caller gets: one acquisition of a HeldLock; release is idempotent per handle. */
export class LockHandleView implements LockHandle {
  private released = false;
  private releasing?: Promise<void>;

  constructor(private readonly lock: HeldLock) {}

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
    return this.released && this.lock.state !== 'lost' ? 'released' : this.lock.state;
  }

  release(): Promise<void> {
    if (!this.released) {
      this.released = true;
      this.releasing = this.lock.exit();
    }
    return this.releasing!;
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
