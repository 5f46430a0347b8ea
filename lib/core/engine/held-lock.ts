// What a holder holds (HeldResource, HeldLock) and the handles its callers get for it.
import { SafeEmitter } from '../events';
import { type LockLossReason, LockLostError } from '../errors';
import type { LockState, LockHandle, LockView } from '../types';
import type { Contender } from './contender';
import type { LockKind } from './lock-drivers';
import type { ZkSession } from '../zookeeper/zk-session';

/**
 * What a holder holds, a lock (HeldLock) or semaphore leases (HeldLease): its state, the signal
 * that aborts with a LockLostError when it is lost, and its 'uncertain' / 'reconnected' / 'lost'
 * events, created on first use. A deletion of the nodes by another client is noticed only once
 * they are watched (one request per node): watchForLoss(), which a 'lost' listener calls too.
 */
export class HeldResource {
  state: LockState = 'held';
  protected lostError?: LockLostError;
  private controller?: AbortController;
  private events?: SafeEmitter;
  private lossListeners?: Set<(error: LockLostError) => void>;

  constructor(
    readonly path: string,
    /**
     * Watches the nodes held for deletion by other clients, on every watchForLoss(): sends nothing
     * for a watch set or in flight (a lock's asks again for one that went unanswered).
     */
    private readonly watchNodes: (resource: HeldResource) => void,
    /** After a loss was recorded and announced (e.g. to the client's 'lost' event). */
    private readonly onLost?: (error: LockLostError) => void,
  ) {}

  /** Aborts with the LockLostError of a loss (a deletion only if watched: watchForLoss). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lostError) this.controller.abort(this.lostError);
    }
    return this.controller.signal;
  }

  /**
   * Someone will be told of a loss: from now on, watch the nodes for deletion by other clients
   * too (one request per node; a lost session is noticed without it). Returns the signal.
   */
  watchForLoss(): AbortSignal {
    if (this.active) this.watchNodes(this);
    return this.signal;
  }

  get active(): boolean {
    return this.state === 'held' || this.state === 'uncertain';
  }

  /**
   * A 'lost' listener added once the holding is lost (or released by close()) is called once,
   * in a microtask, with the same LockLostError: the loss was told before it was there.
   */
  on(event: string, listener: (...args: any[]) => void): this {
    if (event === 'lost') this.watchForLoss();
    const events = (this.events ??= new SafeEmitter());
    events.on(event, listener);
    const error = this.lostError;
    if (event === 'lost' && error) {
      queueMicrotask(() => {
        // Unless off() came first; once told, it is dropped (nothing is told after a loss).
        if (!events.listeners('lost').includes(listener)) return;
        events.off('lost', listener);
        listener(error);
      });
    }
    return this;
  }

  off(event: string, listener: (...args: any[]) => void): this {
    this.events?.off(event, listener);
    return this;
  }

  /**
   * @internal Calls `listener` with the LockLostError of a loss from now on (not of a release by
   * close()), without watching the nodes as the signal and 'lost' do: it hears of what is noticed
   * anyway (the session's loss, a deletion while watched). Returns what removes it.
   */
  onLoss(listener: (error: LockLostError) => void): () => void {
    const listeners = (this.lossListeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** No longer ours: aborts the signal; `client-closed` (our close()) makes it 'released'. */
  lose(reason: LockLossReason, detail: string): void {
    if (this.state === 'lost' || this.state === 'released') return;
    this.state = reason === 'client-closed' ? 'released' : 'lost';
    const error = new LockLostError(this.path, reason, detail);
    this.lostError = error;
    this.controller?.abort(error);
    try {
      this.events?.emit('lost', error);
    } finally {
      // The library's own bookkeeping, even if a listener threw.
      if (this.state === 'lost') for (const listener of this.lossListeners ?? []) listener(error);
      this.onLost?.(error);
    }
  }

  suspend(): void {
    if (this.state !== 'held') return;
    this.state = 'uncertain';
    this.events?.emit('uncertain');
  }

  resume(): void {
    if (this.state !== 'uncertain') return;
    this.state = 'held';
    this.events?.emit('reconnected');
  }
}

/** @internal The process-side record of one held lock, shared by one owner's re-entrant handles. */
export class HeldLock extends HeldResource {
  private count = 1;
  readonly acquiredAt = Date.now();
  /** The queue's release of this lock (node deletion), shared by close() and the last exit. */
  private ending?: Promise<void>;

  constructor(
    path: string,
    /** Full path (namespace applied), the key of owner scopes. */
    readonly lockPath: string,
    /** Which side of the lock path it holds (owner scopes keep read, write and mutex apart). */
    readonly kind: LockKind,
    readonly contender: Contender,
    /** The session its node lives in: a hold never moves to another (its node would not). */
    readonly session: ZkSession,
    readonly fencingToken: bigint,
    private readonly onEnd: (lock: HeldLock) => Promise<void>,
    onLost: (error: LockLostError) => void,
  ) {
    super(path, () => contender.watchSelf(), onLost);
  }

  /** Lost while its owner still holds it: a re-entry would wait for the owner, so fails. */
  get lostWhileHeld(): LockLostError | undefined {
    return this.state === 'lost' && this.count > 0 ? this.lostError : undefined;
  }

  /**
   * Throws LockLostError unless the lock is provably still ours: not lost or released, its session
   * heard from within the safe window (2/3 of the session timeout). Synchronous: a process paused
   * past its session timeout ends the session and aborts the signal now.
   */
  assertHeld(): void {
    const session = this.session;
    if (this.active) session.checkLiveness();
    if (this.lostError) throw this.lostError;
    if (this.state === 'released') {
      throw new LockLostError(this.path, 'released', 'it was released by its owner');
    }
    if (!session.heardRecently) {
      throw new LockLostError(
        this.path,
        'connection-lost',
        `ZooKeeper was last heard from ${session.silenceMs} ms ago, past the safe window of ` +
          `${session.safeWindowMs} ms (2/3 of the session timeout), so ownership cannot be proven`,
      );
    }
  }

  enter(): void {
    this.count++;
  }

  /**
   * One owner's release; the node goes with the last re-entry's. As in assertHeld(), a lock
   * released right after a pause past the session timeout was lost while held, and is told so.
   */
  exit(): Promise<void> {
    if (this.active) this.session.checkLiveness();
    if (--this.count > 0) return Promise.resolve();
    if (this.state !== 'lost') this.state = 'released';
    return this.end();
  }

  /** Ends the hold in its queue (the last exit, or close()); once, whoever asks. */
  end(): Promise<void> {
    this.ending ??= this.onEnd(this);
    return this.ending;
  }
}

/**
 * A held lock as its owner's code sees it through `heldLock(path)`: token, signal, state and
 * events, but no release or hold count, so reading it never keeps the lock.
 */
export class ReadOnlyLockView implements LockView {
  constructor(
    /** The shared record (owner scopes hold it). */
    readonly lock: HeldLock,
  ) {}

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
