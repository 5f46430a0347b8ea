// The multi-path lock: several paths taken in canonical order, all or nothing.
import { InvalidLockOptionsError, LockLostError, LockTimeoutError } from '../errors';
import type { AcquireOptions, LockHandle, LockState, MultiLockHandle } from '../types';

/** What the multi-path lock needs from the client: validation and a single-path acquire. */
export interface MultiLockHost {
  /** The lock path of `path` (namespace applied); throws InvalidLockPathError. */
  lockPathOf(path: string): string;
  acquire(path: string, options: AcquireOptions): Promise<LockHandle>;
}

/**
 * The paths of a multi-path lock in the one order every process takes them (docs/design.md "The lock family"):
 * sorted by lock path, duplicates dropped. Two callers asking for {a, b} and {b, a} both take a
 * first, so neither can hold b while waiting for a. Validates every path before anything is sent.
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
 * Takes every path, in canonical order, within one wait budget; all or nothing: on a timeout, an
 * abort or an error, what was taken is released (in reverse order) before the error is thrown.
 */
export async function acquireAll(
  host: MultiLockHost,
  paths: readonly string[],
  options: AcquireOptions = {},
): Promise<MultiLockHandle> {
  const ordered = canonicalOrder(host, paths);
  const { waitTimeoutMs, signal } = options;
  const deadline = waitTimeoutMs === undefined ? undefined : Date.now() + waitTimeoutMs;
  const taken: LockHandle[] = [];
  try {
    for (const path of ordered) {
      const remaining = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
      taken.push(await host.acquire(path, { waitTimeoutMs: remaining, signal }));
    }
  } catch (err) {
    await releaseInReverse(taken);
    // The budget was the whole wait, not what was left of it for this path.
    if (err instanceof LockTimeoutError && waitTimeoutMs !== undefined) {
      throw new LockTimeoutError(err.path, waitTimeoutMs, err.ahead);
    }
    throw err;
  }
  return new MultiLock(taken);
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

  /** Created on first use (reading a member's signal makes it watch its node). */
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
      for (const lock of this.locks) {
        try {
          lock.assertHeld();
        } catch {
          // lost (its signal told this one) or released: nothing else to do here
        }
      }
      for (const stop of this.unwatch.splice(0)) stop();
      this.releasing = releaseInReverse(this.locks);
    }
    return this.releasing;
  }
}
