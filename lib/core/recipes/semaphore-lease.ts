// HeldLease: the leases a semaphore caller holds, one protected node each.
import { HeldResource } from '../engine/held-lock';
import type { ProtectedNode } from '../engine/protected-node';
import type { SemaphoreLease } from '../types';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { isNoNode } from '../zookeeper/zk-errors';

/**
 * Leases held on one semaphore path: one ephemeral node each. Lost when its session is lost or
 * a node is deleted by someone else (watched only once someone reads the signal or listens for
 * 'lost', like a held lock). release() deletes the nodes through the connection's current
 * session, as a lock's Contender does.
 */
export class HeldLease extends HeldResource implements SemaphoreLease {
  private releasing?: Promise<void>;

  constructor(
    path: string,
    readonly session: ZkSession,
    private readonly nodes: readonly ProtectedNode[],
    /** The connection `session` belongs to (a lost session's nodes are deleted through its next). */
    private readonly connection: ZkConnection,
    private readonly onEnd: (lease: HeldLease) => void,
  ) {
    let watching = false; // one watch per lease node, asked for once
    super(path, (lease) => {
      if (!watching) watchLeases(lease, session, nodes);
      watching = true;
    });
  }

  /** Reading it watches the lease nodes (see HeldResource.watchForLoss). */
  override get signal(): AbortSignal {
    this.watchForLoss();
    return super.signal;
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
    // An expired session took its nodes with it. A session our clock declared lost may not
    // have: a server that restored it from its log keeps its nodes until it expires it, a
    // session timeout after its start, and the next holder would wait that long. So they are
    // deleted through the connection's current session (the names carry our uuids: ours
    // whoever's session it is now); a node deleted by others answers NO_NODE.
    if (this.lostError?.reason !== 'session-expired') {
      const current = this.connection.current;
      await Promise.all(this.nodes.map((n) => n.remove(current)));
    }
    this.onEnd(this);
  }
}

/** Loses `lease` once another client deletes one of its nodes. */
function watchLeases(
  lease: HeldResource,
  session: ZkSession,
  nodes: readonly ProtectedNode[],
): void {
  for (const node of nodes) {
    const vanished = (): void =>
      lease.lose('node-deleted', `lease node ${node.path} was deleted by another client`);
    session
      .getData(node.path, (event) => {
        if (event.name === 'NODE_DELETED' && lease.state !== 'released') vanished();
      })
      .catch((err) => {
        if (isNoNode(err)) vanished();
      });
  }
}
