import { LockAbortedError, LockTimeoutError } from '../errors';
import { HeldLock } from '../held-lock';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { isSessionGone } from '../zookeeper/zk-errors';
import { acquireError } from './acquire-error';
import { Contender, ContenderContext } from './contender';
import { readDriver } from './lock-driver';
import { fencingToken } from './lock-naming';
import type { QueueHost } from './lock-queue';

interface ReadWaiter {
  readonly tryOnly: boolean;
  contender?: Contender;
  done: boolean;
  resolve(lock: HeldLock | null): void;
  reject(error: Error): void;
  cleanup(): void;
}

/**
 * The read side of a read/write lock for one path in one process (docs/design.md §7). Readers
 * that wait together share one `__READ__` node, and all of them hold at once when no writer is
 * ahead of it; a reader that comes later gets a node of its own, queued behind any writer that
 * queued meanwhile, so writers are never starved. At most `maxNodesPerPath` read nodes at a time.
 * A node is deleted when the last of its readers releases.
 */
export class ReadQueue implements ContenderContext {
  readonly driver = readDriver;
  readonly released = new Set<string>();
  private readonly waiters: ReadWaiter[] = [];
  /** Read nodes that hold, with the readers holding on each. */
  private readonly holding = new Map<Contender, Set<HeldLock>>();
  private pending = 0;
  private idleWaiters: Array<() => void> = [];
  private creationScheduled = false;

  constructor(
    private readonly host: QueueHost,
    readonly lockPath: string,
    readonly displayPath: string,
  ) {}

  get connection(): ZkConnection {
    return this.host.connection;
  }
  get nodeData(): Buffer {
    return this.host.nodeData;
  }
  get idle(): boolean {
    return this.holding.size === 0 && this.waiters.length === 0 && this.pending === 0;
  }
  /** Every reader holding now (close() releases them). */
  get holders(): HeldLock[] {
    return [...this.holding.values()].flatMap((set) => [...set]);
  }

  acquire(options: { waitTimeoutMs?: number; signal?: AbortSignal }): Promise<HeldLock> {
    const { waitTimeoutMs, signal } = options;
    if (signal?.aborted) {
      return Promise.reject(new LockAbortedError(this.displayPath, signal.reason));
    }
    return new Promise<HeldLock>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void =>
        this.cancel(waiter, new LockAbortedError(this.displayPath, signal!.reason));
      const waiter: ReadWaiter = {
        tryOnly: false,
        done: false,
        resolve: resolve as (lock: HeldLock | null) => void,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      if (waitTimeoutMs !== undefined) {
        timer = setTimeout(() => {
          const ahead = waiter.contender?.ahead ?? 0;
          this.cancel(waiter, new LockTimeoutError(this.displayPath, waitTimeoutMs, ahead));
        }, waitTimeoutMs);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** A read lock only if no writer is ahead right now (one round trip); null otherwise. */
  tryAcquire(): Promise<HeldLock | null> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ tryOnly: true, done: false, resolve, reject, cleanup: () => undefined });
      this.pump();
    });
  }

  release(lock: HeldLock): Promise<void> {
    lock.releasing ??= this.releaseOnce(lock);
    return lock.releasing;
  }

  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  failAll(error: Error): void {
    for (const w of [...this.waiters]) this.cancel(w, error);
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

  // ---- ContenderContext ---------------------------------------------------------------------

  onPosition(): void {
    this.pump();
  }

  onVanished(contender: Contender): void {
    const locks = this.holding.get(contender);
    for (const lock of locks ?? []) {
      lock.lose('node-deleted', `lock node ${contender.nodePath} was deleted by another client`);
    }
    this.requeue((c) => c === contender);
  }

  onDirsCreated(dirs: string[]): void {
    this.host.onDirsCreated(dirs);
  }

  // ---- internals ----------------------------------------------------------------------------

  private pump(): void {
    // Every node with no writer ahead holds, for all the readers that wait on it.
    for (const node of new Set(this.waiters.map((w) => w.contender))) {
      if (node?.isFirst && node.session?.provenAlive) this.grant(node); // see LockQueue.pump
    }
    for (const w of [...this.waiters]) {
      // A try that learned a writer is ahead gives up at once.
      if (w.tryOnly && w.contender?.predecessor !== undefined && !w.contender.isFirst) {
        this.cancel(w, null);
      }
    }
    if (!this.creationScheduled && this.waiters.some((w) => !w.contender)) {
      this.creationScheduled = true;
      queueMicrotask(() => {
        this.creationScheduled = false;
        this.queueNode();
      });
    }
  }

  /** One new node for the readers still without one (they asked before anything created after it). */
  private queueNode(): void {
    const batch = this.waiters.filter((w) => !w.contender);
    if (batch.length === 0 || this.nodeCount() >= this.host.maxNodesPerPath) return;
    const contender = new Contender(this);
    for (const w of batch) w.contender = contender;
    this.pending++;
    contender
      .enter()
      .then(
        () => this.pump(),
        (err) => {
          const members = this.waiters.filter((w) => w.contender === contender);
          for (const w of members) w.contender = undefined;
          if (isSessionGone(err)) return this.pump();
          const error = acquireError(err, this.displayPath, this.connection);
          for (const w of members) this.cancel(w, error);
        },
      )
      .finally(() => {
        this.pending--;
        this.checkIdle();
      });
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

  private async releaseOnce(lock: HeldLock): Promise<void> {
    const node = lock.contender;
    const locks = this.holding.get(node);
    locks?.delete(lock);
    if (locks && locks.size > 0) return this.host.onReleased(lock);
    this.holding.delete(node);
    node.setHolding(false);
    if (node.name) this.remember(node.name);
    this.pending++;
    this.pump(); // readers waiting for a node of their own can have one now
    try {
      await node.remove();
      this.host.onReleased(lock);
    } finally {
      this.pending--;
      this.checkIdle();
    }
  }

  /** Waiters on nodes that are gone queue again; holders were told by their caller. */
  private requeue(gone: (c: Contender) => boolean): void {
    for (const w of this.waiters) {
      if (w.contender && gone(w.contender)) {
        w.contender.abandon();
        w.contender = undefined;
      }
    }
    this.pump();
  }

  private cancel(waiter: ReadWaiter, error: Error | null): void {
    if (waiter.done) return;
    this.finish(waiter);
    if (error) waiter.reject(error);
    else waiter.resolve(null);
    const node = waiter.contender;
    if (node && !this.holding.has(node) && !this.waiters.some((w) => w.contender === node)) {
      this.pending++;
      void node.remove().finally(() => {
        this.pending--;
        this.checkIdle();
      });
    }
    this.pump();
    this.checkIdle();
  }

  private finish(waiter: ReadWaiter): void {
    waiter.done = true;
    waiter.cleanup();
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  private nodeCount(): number {
    const nodes = new Set<Contender>(this.holding.keys());
    for (const w of this.waiters) if (w.contender) nodes.add(w.contender);
    return nodes.size;
  }

  private checkIdle(): void {
    if (!this.idle) return;
    this.host.onIdle(this);
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private remember(name: string): void {
    this.released.add(name);
    if (this.released.size > 64)
      this.released.delete(this.released.values().next().value as string);
  }
}
