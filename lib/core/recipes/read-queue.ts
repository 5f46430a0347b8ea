import { HeldLock } from '../held-lock';
import type { ZkSession } from '../zookeeper/zk-session';
import { Contender } from './contender';
import { readDriver } from './lock-driver';
import { fencingToken } from './lock-naming';
import { QueueHost, WaiterQueue } from './waiter-queue';

/**
 * The read side of a read/write lock for one path in one process (docs/design.md §7). Readers
 * that wait together share one `__READ__` node, and all of them hold at once when no writer is
 * ahead of it; a reader that comes later gets a node of its own, queued behind any writer that
 * queued meanwhile, so writers are never starved. At most `maxNodesPerPath` read nodes at a time.
 * A node is deleted when the last of its readers releases.
 */
export class ReadQueue extends WaiterQueue {
  /** Read nodes that hold, with the readers holding on each. */
  private readonly holding = new Map<Contender, Set<HeldLock>>();

  constructor(host: QueueHost, lockPath: string, displayPath: string) {
    super(host, lockPath, displayPath, readDriver);
  }

  get idle(): boolean {
    return this.holding.size === 0 && this.waiters.length === 0 && this.pending === 0;
  }

  /** Every reader holding now (close() releases them). */
  get holders(): HeldLock[] {
    return [...this.holding.values()].flatMap((set) => [...set]);
  }

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    const detail = session.lossDetail(reason, 'the lock node');
    for (const [node, locks] of this.holding) {
      if (node.session === session) for (const lock of locks) lock.lose(reason, detail);
    }
    this.requeue((c) => c.session === session);
  }

  onSuspended(session: ZkSession): void {
    for (const [node, locks] of this.holding) {
      if (node.session === session) for (const lock of locks) lock.suspend();
    }
  }

  onReconnected(session: ZkSession): void {
    for (const [node, locks] of this.holding) {
      if (node.session !== session) continue;
      for (const lock of locks) lock.resume();
      node.rearm();
    }
    for (const w of this.waiters) if (w.contender?.session === session) w.contender.rearm();
    this.pump();
  }

  onVanished(contender: Contender): void {
    const locks = this.holding.get(contender);
    for (const lock of locks ?? []) {
      lock.lose('node-deleted', `lock node ${contender.nodePath} was deleted by another client`);
    }
    this.requeue((c) => c === contender);
  }

  // ---- the recipe ---------------------------------------------------------------------------

  protected pump(): void {
    // Every node with no writer ahead holds, for all the readers that wait on it (only on a
    // session proven alive: see LockQueue.pump).
    for (const node of new Set(this.waiters.map((w) => w.contender))) {
      if (node?.isFirst && node.session?.provenAlive) this.grant(node);
    }
    this.dropLosingTries(); // a try that learned a writer is ahead gives up at once
    this.scheduleNode();
  }

  protected async releaseOnce(lock: HeldLock): Promise<void> {
    const node = lock.contender;
    const locks = this.holding.get(node);
    locks?.delete(lock);
    if (locks && locks.size > 0) return this.host.onReleased(lock);
    this.holding.delete(node);
    node.setHolding(false);
    this.pending++;
    this.pump(); // readers waiting for a node of their own can have one now
    try {
      await node.remove();
      if (node.name) this.remember(node.name);
      this.host.onReleased(lock);
    } finally {
      this.pending--;
      this.checkIdle();
    }
  }

  protected heldNodes(): Iterable<Contender> {
    return this.holding.keys();
  }

  private grant(node: Contender): void {
    const members = this.waiters.filter((w) => w.contender === node);
    const token = fencingToken(node.lockNodeCzxid, node.sequence);
    const locks = this.holding.get(node) ?? new Set<HeldLock>();
    this.holding.set(node, locks);
    node.setHolding(true);
    if (this.host.watchesLoss) node.watchSelf();
    for (const w of members) {
      this.finish(w);
      const lock = new HeldLock(
        this.displayPath,
        this.lockPath,
        node,
        token,
        (l) => this.release(l),
        (l, e) => this.host.onLost(l, e),
      );
      locks.add(lock);
      w.resolve(lock);
    }
  }
}
