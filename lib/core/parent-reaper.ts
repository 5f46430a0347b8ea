import type { ZkConnection } from './zookeeper/zk-connection';
import { isNoNode } from './zookeeper/zk-errors';
import { parentPath } from './paths';

/**
 * Removes lock nodes (and the ancestors this client created) once they have been idle in this
 * process for `delayMs`, so locking many distinct ids leaves nothing behind. Safe against other
 * acquirers: ZooKeeper refuses to delete a node with children (NOT_EMPTY), and an acquirer whose
 * create fails with NO_NODE re-creates the path. One timer for all paths.
 */
export class ParentReaper {
  private readonly due = new Map<string, number>();
  private readonly createdDirs = new Set<string>();
  private timer?: NodeJS.Timeout;
  private readonly inflight = new Set<Promise<void>>();

  constructor(
    private readonly connection: ZkConnection,
    private readonly delayMs: number,
    private readonly isBusy: (lockPath: string) => boolean,
  ) {}

  created(dirs: string[]): void {
    for (const d of dirs) this.createdDirs.add(d);
  }

  schedule(lockPath: string): void {
    if (this.delayMs <= 0) return this.start(lockPath);
    this.due.set(lockPath, Date.now() + this.delayMs);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), Math.max(50, Math.min(this.delayMs, 1000)));
      this.timer.unref();
    }
  }

  cancel(lockPath: string): void {
    this.due.delete(lockPath);
  }

  /** Reaps everything scheduled now (close()). */
  async flush(): Promise<void> {
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
    const session = this.connection.current;
    if (session.state !== 'connected' || this.isBusy(lockPath)) return;
    let path = lockPath;
    // The lock node itself, then the ancestors this client created, deepest first.
    for (;;) {
      try {
        await session.remove(path);
      } catch (err) {
        if (!isNoNode(err)) return; // NOT_EMPTY: in use elsewhere; connection trouble: next time
      }
      this.createdDirs.delete(path);
      path = parentPath(path);
      if (!this.createdDirs.has(path) || this.hasBusyDescendant(path)) return;
    }
  }

  private hasBusyDescendant(dir: string): boolean {
    for (const p of this.due.keys()) if (p.startsWith(dir + '/')) return true;
    return false;
  }
}
