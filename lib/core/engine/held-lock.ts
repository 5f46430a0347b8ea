// HeldLock: the process-side record of one held lock, shared by its owner's re-entrant handles.
import { LockLostError } from '../errors';
import type { Contender } from './contender';
import { HeldResource } from './held-resource';

/** @internal The process-side record of one held lock; shared by re-entrant handles of the same owner. */
export class HeldLock extends HeldResource {
  private count = 1;
  readonly acquiredAt = Date.now();
  /** The queue's release of this lock (node deletion), shared by close() and the last exit. */
  private ending?: Promise<void>;

  constructor(
    path: string,
    /** Full path (namespace applied), the key of owner scopes. */
    readonly lockPath: string,
    readonly contender: Contender,
    readonly fencingToken: bigint,
    private readonly onEnd: (lock: HeldLock) => Promise<void>,
    onLost: (error: LockLostError) => void,
  ) {
    super(path, () => contender.watchSelf(), onLost);
  }

  /** Which side of the lock path it holds (owner scopes keep read, write and mutex holds apart). */
  get kind(): 'mutex' | 'read' | 'write' {
    return this.contender.kind;
  }

  /**
   * Lost while its owner still holds it (not released yet): a re-entry in the owner's scope
   * would wait for the owner itself, so it fails with this instead.
   */
  get lostWhileHeld(): LockLostError | undefined {
    return this.state === 'lost' && this.count > 0 ? this.lostError : undefined;
  }

  /**
   * Throws LockLostError unless the lock is still ours as far as this process can prove: not
   * lost or released, and its session heard from within the safe window (2/3 of the session
   * timeout). Synchronous: applies the session clock's rules first, so in a process that was
   * paused or blocked past its session timeout it ends the session and aborts the signal now.
   */
  assertHeld(): void {
    const session = this.contender.session;
    if (this.active) session?.checkLiveness();
    if (this.lostError) throw this.lostError;
    if (this.state === 'released') {
      throw new LockLostError(this.path, 'released', 'it was released by its owner');
    }
    if (session && !session.heardRecently) {
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
   * One owner's release; the node goes when the last re-entry is released. The session clock's
   * rules apply first, as in assertHeld(): a lock released right after its process was paused or
   * blocked past the session timeout was lost while held, and is told so (the 'lost' event, its
   * signal), not ended as released before the clock's timer could run.
   */
  exit(): Promise<void> {
    if (this.active) this.contender.session?.checkLiveness();
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
