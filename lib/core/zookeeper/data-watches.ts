/** Owns a session's data watches: one registration per path, delivery to every watcher, removal. */
import type { Watcher, WatcherEvent } from './zk-client';

interface PathWatch {
  watchers: Set<Watcher>;
  dispatcher: Watcher;
}

/**
 * The wire keeps every callback it is given until the node changes, so many
 * waiters on one node (tries that gave up, timed-out waiters) would pile up there. The session
 * registers one dispatcher per path instead; the watchers join it and leave it here.
 */
export class DataWatches {
  private readonly paths = new Map<string, PathWatch>();

  /** Adds `watcher` to the path's watch; returns the callback to register, if none is yet. */
  join(path: string, watcher: Watcher): Watcher | undefined {
    const existing = this.paths.get(path);
    if (existing) {
      existing.watchers.add(watcher);
      return undefined;
    }
    const entry: PathWatch = {
      watchers: new Set([watcher]),
      dispatcher: (event: WatcherEvent) => {
        if (this.paths.get(path) === entry) this.paths.delete(path);
        for (const w of entry.watchers) w(event);
      },
    };
    this.paths.set(path, entry);
    return entry.dispatcher;
  }

  /** The request that would have set `dispatcher` failed: no watch is set, the next registers. */
  notSet(path: string, dispatcher: Watcher): void {
    if (this.paths.get(path)?.dispatcher === dispatcher) this.paths.delete(path);
  }

  /** Drops a watcher whose waiter gave up; the path's one registration stays. */
  leave(path: string, watcher: Watcher): void {
    this.paths.get(path)?.watchers.delete(watcher);
  }

  /** The session ended: no watch of it fires any more. */
  clear(): void {
    this.paths.clear();
  }
}
