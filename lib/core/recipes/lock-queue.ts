import { HeldLock } from '../held-lock';
import type { ZkSession } from '../zookeeper/zk-session';
import { Contender } from './contender';
import { LockDriver, mutexDriver } from './lock-driver';
import { QueueHost, Waiter, WaiterQueue } from './waiter-queue';

export type { QueueHost } from './waiter-queue';

/**
 * Two-level lock for one path in one process: a local FIFO of callers in front of the
 * ZooKeeper queue, with at most `maxNodesPerPath` nodes of ours at a time (the mutex, and the
 * write side of a read/write lock).
 *
 * A node stands for a batch: the callers that were waiting, without a node, when its create was
 * sent. They all asked before any node created after it, so when the node comes first it serves
 * them in turn, handing the lock on in process, without a request, with a new fencing generation
 * each time; then it is deleted. A process thus never serves its own caller ahead of a remote
 * node that queued earlier (docs/design.md §3), and a hot path costs ZooKeeper one node per batch
 * instead of one per caller.
 */
export class LockQueue extends WaiterQueue {
  holder: HeldLock | null = null;
  /** A node whose existence is being checked before it serves the next caller of its batch. */
  private confirming?: Contender;

  constructor(
    host: QueueHost,
    lockPath: string,
    displayPath: string,
    driver: LockDriver = mutexDriver,
  ) {
    super(host, lockPath, displayPath, driver);
  }

  get idle(): boolean {
    return !this.holder && this.waiters.length === 0 && this.pending === 0;
  }

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    if (this.holder?.contender.session === session) {
      this.holder.lose(reason, session.lossDetail(reason, 'the lock node'));
    }
    this.requeue((c) => c.session === session); // queue again in the new session
  }

  onSuspended(session: ZkSession): void {
    if (this.holder?.contender.session === session) this.holder.suspend();
  }

  onReconnected(session: ZkSession): void {
    if (this.holder?.contender.session === session) {
      this.holder.resume();
      this.holder.contender.rearm();
    }
    for (const w of this.waiters) if (w.contender?.session === session) w.contender.rearm();
    this.pump(); // a caller whose node became first while we were disconnected
  }

  onVanished(contender: Contender): void {
    if (this.holder?.contender === contender) {
      this.holder.lose(
        'node-deleted',
        `lock node ${contender.nodePath} was deleted by another client`,
      );
    } else {
      contender.abandon();
    }
    // Our node was deleted under us: its waiting callers queue again.
    let requeued = false;
    for (const w of this.waiters) {
      if (w.contender === contender) {
        w.contender = undefined;
        requeued = true;
      }
    }
    if (requeued) this.pump();
  }

  // ---- the recipe ---------------------------------------------------------------------------

  protected pump(): void {
    if (!this.holder && !this.confirming) {
      // Granted only on a connected session heard from within the safe window: while
      // disconnected ownership is unknown, a node of a lost session is gone (its callers queue
      // anew), and a process that just woke from a pause may hold a session the server expired.
      const first = this.waiters.find((w) => w.contender?.isFirst);
      const node = first?.contender;
      if (node?.session?.provenAlive) {
        // The next caller of a batch: only once the server said the node still exists since
        // the last reconnect, or a remote that took the lock after a deletion would hold too.
        if (node.holding && !node.confirmed) this.confirm(node);
        else this.grant(first!);
      }
    }
    this.scheduleNode();
    this.dropLosingTries();
  }

  protected async releaseOnce(lock: HeldLock): Promise<void> {
    if (this.holder === lock) this.holder = null;
    const node = lock.contender;
    if (lock.state !== 'lost' && this.canServeBatch(node)) {
      // In-process handoff: the node stays, the next caller of its batch holds it now. While
      // disconnected the node keeps its place, and pump() serves the caller once the session is
      // back (onReconnected); if the session is lost instead, its callers queue anew. A node
      // that serves more than one caller watches itself (one request per batch, not per
      // caller), so a deletion by another client ends the batch with a LockLostError; the next
      // caller is served only once the server said the node exists (usually known already: the
      // watch is armed when a batch's first caller is served).
      this.host.onReleased(lock);
      return this.pump();
    }
    node.setHolding(false);
    // Callers of its batch that cannot be served on this node (lost, generations used up) requeue.
    for (const w of this.waiters) if (w.contender === node) w.contender = undefined;
    this.pending++;
    const deletion = node.remove();
    this.pump();
    try {
      // Our node queued right behind it is first once the deletion's event comes, not before:
      // that event also tells whether someone deleted the waiting node meanwhile
      // (docs/design.md "A waiter's own node").
      await deletion;
      if (node.name) this.remember(node.name);
      this.host.onReleased(lock);
    } finally {
      this.pending--;
      this.checkIdle();
    }
  }

  protected heldNodes(): Contender[] {
    return this.holder ? [this.holder.contender] : [];
  }

  /** A try fails at once while the lock is held or waited for in this process. */
  protected override busyLocally(): boolean {
    return !!this.holder || this.waiters.length > 0;
  }

  /**
   * A holder whose lock was lost and whose code still runs: a node of ours queued now would come
   * first and wait for that code, keeping every other process out. Queue once it is done.
   */
  protected override mayQueueNode(): boolean {
    return this.holder?.state !== 'lost';
  }

  /**
   * The nodes ahead of ours in ZooKeeper, where a node of ours ahead counts as the callers it
   * serves; plus the callers of our own node ahead of this one (and its holder).
   */
  protected override callersAhead(waiter: Waiter): number | undefined {
    const node = waiter.contender;
    if (node?.predecessor === undefined) return undefined;
    const before = this.waiters.slice(0, this.waiters.indexOf(waiter));
    const sameNode = before.filter((w) => w.contender === node).length;
    const onOwnNodesAhead = before.filter(
      (w) => w.contender && w.contender !== node && w.contender.sequence < node.sequence,
    );
    const ownNodesAhead = new Set(onOwnNodesAhead.map((w) => w.contender));
    const holderNode = this.holder?.contender;
    if (holderNode && holderNode !== node) ownNodesAhead.add(holderNode); // ahead: it holds
    const holding = holderNode ? 1 : 0;
    return node.ahead - ownNodesAhead.size + onOwnNodesAhead.length + sameNode + holding;
  }

  /** Asks the server whether a batch's node still exists, then serves (or requeues) its callers. */
  private confirm(node: Contender): void {
    this.confirming = node;
    void node.confirmSelf().finally(() => {
      if (this.confirming === node) this.confirming = undefined;
      this.pump();
    });
  }

  /** Whether the released node can serve another caller of its batch, without a request. */
  private canServeBatch(node: Contender): boolean {
    return node.canServeAgain && this.waiters.some((w) => w.contender === node);
  }

  private grant(waiter: Waiter): void {
    this.finish(waiter);
    const contender = waiter.contender!;
    const lock = new HeldLock(
      this.displayPath,
      this.lockPath,
      contender,
      contender.issueToken(),
      (l) => this.release(l),
      (l, e) => this.host.onLost(l, e),
    );
    this.holder = lock;
    contender.setHolding(true);
    // Someone listens for lost locks, or the node will serve more callers of its batch: watch
    // it for deletion by others (else on demand).
    if (this.host.watchesLoss || this.waiters.some((w) => w.contender === contender)) {
      contender.watchSelf();
    }
    waiter.resolve(lock);
  }
}
