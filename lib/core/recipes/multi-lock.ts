// The multi-path lock: several paths taken in canonical order, all or nothing.
import { InvalidLockOptionsError, LockLostError, LockTimeoutError } from '../errors';
import type { AcquireOptions, LockHandle, LockState, MultiLockHandle } from '../types';

/** What the multi-path lock needs from the client: validation and a single-path acquire. */
export interface MultiLockHost {
  /** The lock path of `path` (namespace applied); throws InvalidLockPathError. */
  lockPathOf(path: string): string;
  acquire(path: string, options: AcquireOptions): Promise<LockHandle>;
  /**
   * Calls `listener` when `lock` (one acquire() returned) is lost, without watching its node
   * (HeldResource.onLoss); returns what removes it.
   */
  onLoss(lock: LockHandle, listener: (error: LockLostError) => void): () => void;
}

/**
 * The paths of a multi-path lock in the one order every process takes them: sorted by lock path,
 * duplicates dropped, so {a, b} and {b, a} cannot deadlock (docs/design.md "The lock family").
 * Validates every path before anything is sent.
 */
export function canonicalOrder(host: MultiLockHost, paths: readonly string[]): string[] {
  if (!Array.isArray(paths) || paths.length === 0) {
    throw new InvalidLockOptionsError(
      'acquireAll',
      'the path list is empty',
      'pass at least one lock path',
    );
  }
  const byLockPath = new Map<string, string>();
  for (const path of paths) {
    const lockPath = host.lockPathOf(path);
    if (!byLockPath.has(lockPath)) byLockPath.set(lockPath, path);
  }
  return [...byLockPath.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, path]) => path);
}

/**
 * Takes every path in canonical order within one wait budget, all or nothing: on a timeout, an
 * abort or an error, what was taken is released in reverse order before the error is thrown. A
 * member lost before the last is granted ends the wait at once with its LockLostError.
 */
export async function acquireAll(
  host: MultiLockHost,
  paths: readonly string[],
  options: AcquireOptions = {},
): Promise<MultiLockHandle> {
  const ordered = canonicalOrder(host, paths);
  const { waitTimeoutMs, signal, pathTemplate } = options;
  const deadline = waitTimeoutMs === undefined ? undefined : Date.now() + waitTimeoutMs;
  const taken: LockHandle[] = [];
  // The members' waits end when the caller's signal aborts (its reason passed on as is), or when
  // a member taken already is lost.
  const wait = new AbortController();
  const forward = (): void => wait.abort(signal!.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener('abort', forward, { once: true });
  let lostMember: LockLostError | undefined;
  const lose = (error: LockLostError): void => {
    lostMember ??= error;
    wait.abort(error);
  };
  const unwatch: Array<() => void> = [];
  try {
    for (const path of ordered) {
      if (lostMember) throw lostMember;
      const remaining = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      const lock = await host.acquire(path, {
        waitTimeoutMs: remaining,
        signal: wait.signal,
        pathTemplate,
      });
      taken.push(lock);
      unwatch.push(host.onLoss(lock, lose));
    }
    // The grant of the last member applied the session clock's rules to its own session only.
    for (const lock of taken) checkHeld(lock);
    const lost = taken.find((l) => l.state === 'lost');
    if (lost) lose(lost.signal.reason as LockLostError); // not active: reading it sends nothing
    if (lostMember) throw lostMember;
  } catch (err) {
    await releaseInReverse(taken);
    if (lostMember) throw lostMember;
    // The budget was the whole wait, not what was left of it for this path.
    if (err instanceof LockTimeoutError && waitTimeoutMs !== undefined) {
      throw new LockTimeoutError(err.path, waitTimeoutMs, err.queue ?? err.ahead);
    }
    throw err;
  } finally {
    signal?.removeEventListener('abort', forward);
    for (const stop of unwatch) stop();
  }
  return new MultiLock(taken);
}

/**
 * Applies the session clock's rules to `lock` (HeldLock.assertHeld): a session silent past its
 * timeout is lost now, and its locks with it. Only a loss counts: a lock whose session is merely
 * unproven (suspended) stays a member, 'uncertain', as a single lock may be right after its grant.
 */
function checkHeld(lock: LockHandle): void {
  try {
    lock.assertHeld();
  } catch {
    // the state tells
  }
}

async function releaseInReverse(locks: readonly LockHandle[]): Promise<void> {
  for (let i = locks.length - 1; i >= 0; i--) await locks[i].release();
}

/** Several held locks as one: lost when any member is lost; released in reverse order. */
class MultiLock implements MultiLockHandle {
  readonly paths: readonly string[];
  private controller?: AbortController;
  private releasing?: Promise<void>;
  private readonly unwatch: Array<() => void> = [];

  constructor(readonly locks: readonly LockHandle[]) {
    this.paths = locks.map((l) => l.path);
  }

  get fencingTokens(): readonly bigint[] {
    return this.locks.map((l) => l.fencingToken);
  }

  /** Watches every member's node for deletion by another client; returns the signal. */
  watchForLoss(): AbortSignal {
    for (const lock of this.locks) lock.watchForLoss();
    return this.signal;
  }

  /** Created on first use, from the members' signals. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      for (const lock of this.locks) {
        const member = lock.signal;
        if (member.aborted) {
          controller.abort(member.reason);
          break;
        }
        const onAbort = (): void => {
          if (!controller.signal.aborted) controller.abort(member.reason as LockLostError);
        };
        member.addEventListener('abort', onAbort, { once: true });
        this.unwatch.push(() => member.removeEventListener('abort', onAbort));
      }
    }
    return this.controller.signal;
  }

  /** 'lost' if any member is lost, 'uncertain' if any is, 'released' once released. */
  get state(): LockState {
    const states = this.locks.map((l) => l.state);
    for (const s of ['lost', 'released', 'uncertain'] as const) if (states.includes(s)) return s;
    return 'held';
  }

  /** Idempotent; releases members in the reverse of the order they were taken. */
  release(): Promise<void> {
    if (!this.releasing) {
      // As each lock's release, the session clock's rules first (HeldLock.exit), while its
      // signal still reaches this one: a loss found now is told here too.
      for (const lock of this.locks) checkHeld(lock); // a loss: its signal told this one
      for (const stop of this.unwatch.splice(0)) stop();
      this.releasing = releaseInReverse(this.locks);
    }
    return this.releasing;
  }
}
