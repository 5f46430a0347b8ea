// The watch a waiting Contender keeps on the node ahead of its own.
import type { ZkSession } from '../zookeeper/zk-session';
import { isNoNode } from '../zookeeper/zk-errors';

/** @internal What the watch tells its contender about the node it waits for. */
export interface Predecessor {
  /** The node is gone (deleted, or not there when the watch was set). */
  gone(name: string): void;
  /** Another event on it: list again to learn our place. */
  changed(): void;
}

/**
 * @internal
 * A waiter watches only the node its policy names, not the lock node (docs/design.md "The mutex
 * recipe"): one getData watch at a time, moved when the node ahead changes, and removed when the
 * waiter gives up or moves on, so no callback is left behind on a node it no longer waits for.
 */
export class PredecessorWatch {
  private armed?: { path: string; watcher: (event: { name: string }) => void };

  constructor(private readonly contender: Predecessor) {}

  /** Whether a watch is armed (a reconnect arms the own-node watch again with it). */
  get active(): boolean {
    return this.armed !== undefined;
  }

  /** Watches `name` in `lockPath` (nothing to do if it is the node watched already). */
  watch(session: ZkSession, lockPath: string, name: string): void {
    const path = `${lockPath}/${name}`;
    if (this.armed?.path === path) return;
    this.cancel(session);
    const watcher = (event: { name: string }): void => {
      if (this.armed?.watcher === watcher) this.armed = undefined;
      if (event.name === 'NODE_DELETED') this.contender.gone(name);
      else this.contender.changed();
    };
    this.armed = { path, watcher };
    session.getData(path, watcher).catch((err) => {
      if (this.armed?.watcher === watcher) this.armed = undefined;
      if (isNoNode(err)) this.contender.gone(name);
    });
  }

  /** Removes the watch's callback from `session` (the waiter gave up or moved on). */
  cancel(session: ZkSession | undefined): void {
    if (!this.armed || !session) return;
    session.unwatchData(this.armed.path, this.armed.watcher);
    this.armed = undefined;
  }
}
