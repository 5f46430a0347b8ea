// The ParentReaper: removes the lock paths (and empty ancestors) this process no longer uses.
import type { ZkConnection } from '../zookeeper/zk-connection';
import { isNamespace, removeIdleLockPath } from './lock-path';
import { parentPath } from '../paths';

/**
 * Tries on a connected session that failed on the connection (lost or unanswered) before a path
 * is given up: a path the server refuses to read drops the connection every time.
 * A failure counts only if the server answered us since the previous one: a server that answers
 * nothing (frozen, or out of quorum) is an outage, and the path waits for its end instead.
 */
const FAILED_TRIES = 3;

/**
 * @internal
 * Removes lock nodes (and their empty ancestors created as lock paths) once idle in this process
 * for `delayMs`: the server removes these CONTAINER nodes too, but slowly and a bounded number a
 * minute (docs/design.md "Cleanup"). Never the session's namespace or above, whatever their
 * data (older releases marked a namespace as a lock path). Safe against other acquirers
 * (ZooKeeper refuses to delete a node with children; a create that finds no path makes it
 * again) and for other data: only unchanged lock paths go (lock-path.ts). A path is remembered
 * only while scheduled or being removed, so one another client removed leaves nothing here. One
 * timer for all paths.
 */
export class ParentReaper {
  private readonly due = new Map<string, number>();
  /** Paths whose removal failed on a connected session: how often, and when last (FAILED_TRIES). */
  private readonly failures = new Map<string, { tries: number; at: number }>();
  private timer?: NodeJS.Timeout;
  private readonly inflight = new Set<Promise<void>>();
  private stopped = false;
  /** What the users of lock paths (lock queues, semaphores) still use: left alone. */
  private readonly inUse: Array<(lockPath: string) => boolean> = [];

  constructor(
    /** The connection whose session a lock path uses (its ancestors are removed through it too). */
    private readonly connectionOf: (lockPath: string) => ZkConnection,
    private readonly delayMs: number,
  ) {}

  /** A user of lock paths registers what it uses: the reaper never removes such a path. */
  keepWhile(inUse: (lockPath: string) => boolean): void {
    this.inUse.push(inUse);
  }

  /** How many paths it remembers (scheduled, being removed, failing): 0 once all are done. */
  get remembered(): number {
    return this.due.size + this.inflight.size + this.failures.size;
  }

  schedule(lockPath: string, delayMs = this.delayMs): void {
    if (this.stopped) return;
    if (delayMs <= 0) return this.start(lockPath);
    this.due.set(lockPath, Date.now() + delayMs);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), Math.max(50, Math.min(delayMs, 1000)));
      this.timer.unref();
    }
  }

  cancel(lockPath: string): void {
    this.due.delete(lockPath);
    this.failures.delete(lockPath);
  }

  /** Reaps everything scheduled now (close()). */
  async flush(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    const paths = [...this.due.keys()];
    this.due.clear();
    paths.forEach((p) => this.start(p));
    await Promise.all([...this.inflight]);
  }

  private start(lockPath: string): void {
    const reaping = this.reap(lockPath).finally(() => this.inflight.delete(reaping));
    this.inflight.add(reaping);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [path, at] of this.due) {
      if (at > now) continue;
      this.due.delete(path);
      this.start(path);
    }
    if (this.due.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async reap(lockPath: string): Promise<void> {
    const session = this.connectionOf(lockPath).current;
    if (this.isBusy(lockPath)) return;
    if (session.state !== 'connected') return this.retryLater(lockPath);
    let path = lockPath;
    // The lock node itself, then its ancestors while they are empty lock paths, deepest first.
    for (;;) {
      const outcome = await removeIdleLockPath(session, path);
      if (outcome === 'kept' || outcome === 'foreign') {
        this.failures.delete(lockPath);
        return; // in use elsewhere, or not ours
      }
      // Connection trouble: again later (from the lock node: gone by then, so NO_NODE), a few
      // times (the path is left in ZooKeeper then).
      if (outcome === 'retry') return this.failed(lockPath, Date.now() - session.silenceMs);
      this.failures.delete(lockPath);
      path = parentPath(path);
      if (path === '/' || isNamespace(path, session.namespace) || this.hasBusyDescendant(path)) {
        return;
      }
    }
  }

  /** `heardAt`: when the server last answered us (a reply or a ping reply). */
  private failed(lockPath: string, heardAt: number): void {
    const now = Date.now();
    const previous = this.failures.get(lockPath);
    const tries = !previous ? 1 : heardAt > previous.at ? previous.tries + 1 : previous.tries;
    if (tries >= FAILED_TRIES) {
      this.failures.delete(lockPath);
      return;
    }
    this.failures.set(lockPath, { tries, at: now });
    this.retryLater(lockPath);
  }

  /** After connection trouble: unless the path is busy again (then cancel() drops it). */
  private retryLater(lockPath: string): void {
    if (!this.isBusy(lockPath)) this.schedule(lockPath, Math.max(this.delayMs, 1000));
  }

  private isBusy(lockPath: string): boolean {
    return this.inUse.some((inUse) => inUse(lockPath));
  }

  private hasBusyDescendant(dir: string): boolean {
    for (const p of this.due.keys()) if (p.startsWith(dir + '/')) return true;
    return false;
  }
}
