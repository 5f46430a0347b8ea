// The watch a Contender keeps on its own node, and whether the server confirmed the node exists.
import type { ZkSession } from '../zookeeper/zk-session';
import { isNoNode } from '../zookeeper/zk-errors';

/** @internal What the watch asks its contender. */
export interface OwnNode {
  /** The session and path to watch; undefined while there is no node in the queue to watch. */
  target(): { session: ZkSession; path: string } | undefined;
  /** After an event other than a deletion: whether to watch again (`wanted`: a holder asked). */
  rewatch(wanted: boolean): boolean;
  /** The node was deleted (the watch fired, or the getData found no node). */
  deleted(): void;
}

/**
 * @internal
 * A waiter always watches its own node (armed with its predecessor's watch); a holder only once
 * someone can be told of a loss (want()). Its answer, and its deletion event, reach us before the
 * event that would make us first (docs/design.md "A waiter's own node"). One callback, so
 * re-arming never adds another to the session's watch.
 */
export class OwnNodeWatch {
  private armed = false;
  private wanted = false;
  /** The answer to the watch's getData; `checked` once it said the node exists. */
  private check?: Promise<void>;
  private checked = false;
  private readonly watcher = (event: { name: string }): void => {
    this.armed = false;
    if (event.name === 'NODE_DELETED') this.node.deleted();
    else if (this.node.rewatch(this.wanted)) this.arm();
  };

  constructor(private readonly node: OwnNode) {}

  /** The server has said, since the last reset, that the node exists. */
  get confirmed(): boolean {
    return this.checked;
  }

  /** Arms the watch (one getData) unless it is armed already. */
  arm(): void {
    const target = this.node.target();
    if (this.armed || !target) return;
    this.armed = true;
    this.check = target.session.getData(target.path, this.watcher).then(
      () => {
        this.checked = true;
      },
      (err) => {
        this.armed = false;
        this.checked = false; // no answer (e.g. a timeout on a live socket): ask again
        if (isNoNode(err)) this.node.deleted();
      },
    );
  }

  /** A holder wants the watch from now on (see HeldLock.observe). */
  want(): void {
    this.wanted = true;
    this.arm();
  }

  /** Resolves once the server has answered the watch (armed if needed). */
  confirm(): Promise<void> {
    this.want();
    return (this.checked ? undefined : this.check) ?? Promise.resolve();
  }

  /** Resolves once the last getData sent has been answered (at once if none was). */
  answered(): Promise<void> {
    return this.check ?? Promise.resolve();
  }

  /** After a reconnect: the watch may have been dropped, and the node may be gone. */
  reset(): void {
    this.armed = false;
    this.checked = false;
  }

  /** Arms again if a holder wanted it. */
  rearm(): void {
    if (this.wanted) this.arm();
  }
}
