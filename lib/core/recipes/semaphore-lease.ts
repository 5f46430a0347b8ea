// HeldLease: the leases a semaphore caller holds, one protected node each.
import { HeldResource } from '../queue/held-resource';
import type { ProtectedNode } from './protected-node';
import type { SemaphoreLease } from '../types';
import type { ZkSession } from '../zookeeper/zk-session';
import { isNoNode } from '../zookeeper/zk-errors';

/**
 * Leases held on one semaphore path: one ephemeral node each. Lost when its session is lost or
 * a node is deleted by someone else (watched only once someone reads the signal or listens for
 * 'lost', like a held lock); then release() deletes nothing of a new session's.
 */
export class HeldLease extends HeldResource implements SemaphoreLease {
  private watching = false;
  private releasing?: Promise<void>;

  constructor(
    path: string,
    readonly session: ZkSession,
    private readonly nodes: readonly ProtectedNode[],
    private readonly onEnd: (lease: HeldLease) => void,
  ) {
    super(path);
  }

  get leases(): number {
    return this.nodes.length;
  }

  release(): Promise<void> {
    // As a lock's release (HeldLock.exit): a lease released right after its process was paused
    // or blocked past the session timeout is told lost first.
    if (!this.releasing && (this.state === 'held' || this.state === 'uncertain')) {
      this.session.checkLiveness();
    }
    this.releasing ??= this.releaseOnce();
    return this.releasing;
  }

  private async releaseOnce(): Promise<void> {
    if (this.state !== 'lost') this.state = 'released';
    // A lost session took its nodes with it; a node deleted by others is gone too (NO_NODE).
    if (
      this.lostError?.reason !== 'session-expired' &&
      this.lostError?.reason !== 'connection-lost'
    ) {
      await Promise.all(this.nodes.map((n) => n.remove()));
    }
    this.onEnd(this);
  }

  protected observe(): void {
    if (this.watching || (this.state !== 'held' && this.state !== 'uncertain')) return;
    this.watching = true;
    for (const node of this.nodes) {
      const vanished = (): void =>
        this.lose('node-deleted', `lease node ${node.path} was deleted by another client`);
      this.session
        .getData(node.path, (event) => {
          if (event.name === 'NODE_DELETED' && this.state !== 'released') vanished();
        })
        .catch((err) => {
          if (isNoNode(err)) vanished();
        });
    }
  }
}
