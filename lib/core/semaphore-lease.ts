import { EventEmitter } from 'node:events';
import { LockLossReason, LockLostError } from './errors';
import type { ProtectedNode } from './recipes/protected-node';
import type { LockState, SemaphoreLease } from './types';
import type { ZkSession } from './zookeeper/zk-session';
import { isNoNode } from './zookeeper/zk-errors';

/**
 * Leases held on one semaphore path: one ephemeral node each. Lost when its session is lost or
 * a node is deleted by someone else (watched only once someone reads the signal or listens for
 * 'lost', like a held lock); then release() deletes nothing of a new session's.
 */
export class HeldLease implements SemaphoreLease {
  state: LockState = 'held';
  private controller?: AbortController;
  private lostError?: LockLostError;
  private events?: EventEmitter;
  private watching = false;
  private releasing?: Promise<void>;

  constructor(
    readonly path: string,
    readonly session: ZkSession,
    private readonly nodes: readonly ProtectedNode[],
    private readonly onEnd: (lease: HeldLease) => void,
  ) {}

  get leases(): number {
    return this.nodes.length;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lostError) this.controller.abort(this.lostError);
      this.watchNodes();
    }
    return this.controller.signal;
  }

  on(event: string, listener: (...args: any[]) => void): this {
    if (event === 'lost') this.watchNodes();
    (this.events ??= new EventEmitter()).on(event, listener);
    return this;
  }

  off(event: string, listener: (...args: any[]) => void): this {
    this.events?.off(event, listener);
    return this;
  }

  release(): Promise<void> {
    this.releasing ??= this.releaseOnce();
    return this.releasing;
  }

  /** The leases are no longer ours; `client-closed` means released by close(). */
  lose(reason: LockLossReason, detail: string): void {
    if (this.state === 'lost' || this.state === 'released') return;
    this.state = reason === 'client-closed' ? 'released' : 'lost';
    this.lostError = new LockLostError(this.path, reason, detail);
    this.controller?.abort(this.lostError);
    this.events?.emit('lost', this.lostError);
  }

  suspend(): void {
    if (this.state !== 'held') return;
    this.state = 'uncertain';
    this.events?.emit('uncertain');
  }

  resume(): void {
    if (this.state !== 'uncertain') return;
    this.state = 'held';
    this.events?.emit('reconnected');
  }

  private async releaseOnce(): Promise<void> {
    const lostBefore = this.state === 'lost';
    if (!lostBefore) this.state = 'released';
    // A lost session took its nodes with it; a node deleted by others is gone too (NO_NODE).
    if (
      this.lostError?.reason !== 'session-expired' &&
      this.lostError?.reason !== 'connection-lost'
    ) {
      await Promise.all(this.nodes.map((n) => n.remove()));
    }
    this.onEnd(this);
  }

  private watchNodes(): void {
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
