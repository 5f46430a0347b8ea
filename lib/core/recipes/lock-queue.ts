import {
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  ZooKeeperUnavailableError,
} from '../errors';
import { HeldLock } from '../held-lock';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { isSessionGone } from '../zookeeper/zk-errors';
import { acquireError } from './acquire-error';
import { Contender, ContenderContext } from './contender';
import { LockDriver, mutexDriver } from './lock-driver';

/** What a queue needs from the client that owns it. */
export interface QueueHost {
  readonly connection: ZkConnection;
  readonly nodeData: Buffer;
  readonly maxNodesPerPath: number;
  /** Whether anyone listens for lost locks on the client (then every holder watches its node). */
  readonly watchesLoss: boolean;
  onDirsCreated(dirs: string[]): void;
  onIdle(queue: { readonly lockPath: string; readonly idle: boolean }): void;
  onLost(lock: HeldLock, error: LockLostError): void;
  onReleased(lock: HeldLock): void;
}

interface Waiter {
  readonly tryOnly: boolean;
  readonly startedAt: number;
  /** The node this caller waits on; several callers of one batch share a node. */
  contender?: Contender;
  done: boolean;
  resolve(lock: HeldLock | null): void;
  reject(error: Error): void;
  cleanup(): void;
}

const RELEASED_MEMORY = 64;

/**
 * Two-level lock for one path in one process: a local FIFO of callers in front of the
 * ZooKeeper queue, with at most `maxNodesPerPath` nodes of ours at a time.
 *
 * A node stands for a batch: the callers that were waiting, without a node, when its create was
 * sent. They all asked before any node created after it, so when the node comes first it serves
 * them in turn, handing the lock on in process, without a request, with a new fencing generation
 * each time; then it is deleted. A process thus never serves its own caller ahead of a remote
 * node that queued earlier (docs/design.md §3), and a hot path costs ZooKeeper one node per batch
 * instead of one per caller.
 */
export class LockQueue implements ContenderContext {
  holder: HeldLock | null = null;
  readonly released = new Set<string>();
  private readonly waiters: Waiter[] = [];
  /** Node requests still under way: deletions, and creates of nodes (maybe given up already). */
  private pending = 0;
  private idleWaiters: Array<() => void> = [];
  private creationScheduled = false;
  /** A node whose existence is being checked before it serves the next caller of its batch. */
  private confirming?: Contender;

  constructor(
    private readonly host: QueueHost,
    readonly lockPath: string,
    readonly displayPath: string,
    readonly driver: LockDriver = mutexDriver,
  ) {}

  get connection(): ZkConnection {
    return this.host.connection;
  }
  get nodeData(): Buffer {
    return this.host.nodeData;
  }
  get idle(): boolean {
    return !this.holder && this.waiters.length === 0 && this.pending === 0;
  }

  acquire(options: { waitTimeoutMs?: number; signal?: AbortSignal }): Promise<HeldLock> {
    const { waitTimeoutMs, signal } = options;
    if (signal?.aborted)
      return Promise.reject(new LockAbortedError(this.displayPath, signal.reason));
    return new Promise<HeldLock>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void =>
        this.cancel(waiter, new LockAbortedError(this.displayPath, signal!.reason));
      const waiter: Waiter = {
        tryOnly: false,
        startedAt: Date.now(),
        done: false,
        resolve: resolve as (lock: HeldLock | null) => void,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      if (waitTimeoutMs !== undefined) {
        timer = setTimeout(
          () => this.cancel(waiter, this.timeoutError(waiter, waitTimeoutMs)),
          waitTimeoutMs,
        );
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Takes the lock only if it is free right now (one round trip); null otherwise. */
  tryAcquire(): Promise<HeldLock | null> {
    if (this.holder || this.waiters.length > 0) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waiters.push({
        tryOnly: true,
        startedAt: Date.now(),
        done: false,
        resolve,
        reject,
        cleanup: () => undefined,
      });
      this.pump();
    });
  }

  /** Called by HeldLock when its last owner releases it, and by close(); runs once per lock. */
  release(lock: HeldLock): Promise<void> {
    lock.releasing ??= this.releaseOnce(lock);
    return lock.releasing;
  }

  private async releaseOnce(lock: HeldLock): Promise<void> {
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
    if (node.name) {
      this.remember(node.name);
      // Our next caller queued right behind the released node is first now: no round trip.
      for (const w of this.waiters) w.contender?.predecessorReleased(node.name);
    }
    // Callers of its batch that cannot be served on this node (lost, generations used up) requeue.
    for (const w of this.waiters) if (w.contender === node) w.contender = undefined;
    this.pending++;
    const deletion = node.remove();
    this.pump();
    try {
      await deletion;
      this.host.onReleased(lock);
    } finally {
      this.pending--;
      this.checkIdle();
    }
  }

  /** Resolves once nothing is held, waited for or under way (close() waits for it). */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Ends every wait (client closing); holders are left to the caller. */
  failAll(error: Error): void {
    for (const w of [...this.waiters]) this.cancel(w, error);
  }

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    if (this.holder?.contender.session === session) {
      this.holder.lose(reason, session.lossDetail(reason, 'the lock node'));
    }
    for (const w of this.waiters) {
      if (w.contender?.session === session) {
        w.contender.abandon();
        w.contender = undefined; // queue again in the new session
      }
    }
    this.pump();
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

  // ---- ContenderContext ---------------------------------------------------------------------

  onPosition(): void {
    this.pump();
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

  onDirsCreated(dirs: string[]): void {
    this.host.onDirsCreated(dirs);
  }

  // ---- internals ----------------------------------------------------------------------------

  private pump(): void {
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
    if (!this.creationScheduled && this.waiters.some((w) => !w.contender)) {
      // Callers arriving in the same tick share one node.
      this.creationScheduled = true;
      queueMicrotask(() => {
        this.creationScheduled = false;
        this.queueNode();
      });
    }
    for (const w of [...this.waiters]) {
      // A try that learned its place without being first gives up at once.
      if (
        w.tryOnly &&
        w.contender &&
        w.contender.predecessor !== undefined &&
        !w.contender.isFirst
      ) {
        this.cancel(w, null);
      }
    }
  }

  /** Asks the server whether a batch's node still exists, then serves (or requeues) its callers. */
  private confirm(node: Contender): void {
    this.confirming = node;
    void node.confirmSelf().finally(() => {
      if (this.confirming === node) this.confirming = undefined;
      this.pump();
    });
  }

  /** One new node for every caller still without one, unless they can be served otherwise. */
  private queueNode(): void {
    const batch = this.waiters.filter((w) => !w.contender);
    if (batch.length === 0) return;
    // A holder whose lock was lost and whose code still runs: a node of ours queued now would
    // come first and wait for that code, keeping every other process out. Queue once it is done.
    if (this.holder?.state === 'lost') return;
    if (this.nodeCount() >= this.host.maxNodesPerPath) return; // a node of ours frees up first
    const contender = new Contender(this);
    for (const w of batch) w.contender = contender;
    this.pending++;
    contender
      .enter()
      .then(
        // A batch that gave up meanwhile: cancel() asked the contender to go, and enter()
        // deletes the node itself once it knows its name.
        () => this.pump(),
        (err) => {
          const members = this.waiters.filter((w) => w.contender === contender);
          for (const w of members) w.contender = undefined;
          if (isSessionGone(err)) return this.pump();
          const error = this.withLockPath(err as Error);
          for (const w of members) this.cancel(w, error);
        },
      )
      .finally(() => {
        this.pending--;
        this.checkIdle();
      });
  }

  /** Whether the released node can serve another caller of its batch, without a request. */
  private canServeBatch(node: Contender): boolean {
    return node.canServeAgain && this.waiters.some((w) => w.contender === node);
  }

  private nodeCount(): number {
    const nodes = new Set<Contender>();
    if (this.holder) nodes.add(this.holder.contender);
    for (const w of this.waiters) if (w.contender) nodes.add(w.contender);
    return nodes.size;
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

  /** Ends a wait with an error, or with null for a try; a node nobody needs any more goes. */
  private cancel(waiter: Waiter, error: Error | null): void {
    if (waiter.done) return;
    this.finish(waiter);
    const contender = waiter.contender;
    if (error) waiter.reject(error);
    else waiter.resolve(null);
    if (
      contender &&
      this.holder?.contender !== contender &&
      !this.waiters.some((w) => w.contender === contender)
    ) {
      this.pending++;
      void contender.remove().finally(() => {
        this.pending--;
        this.checkIdle();
      });
    }
    this.pump();
    this.checkIdle();
  }

  private checkIdle(): void {
    if (!this.idle) return;
    this.host.onIdle(this);
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private finish(waiter: Waiter): void {
    waiter.done = true;
    waiter.cleanup();
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  /** Only documented errors, naming the lock the caller was waiting for. */
  private withLockPath(err: Error): Error {
    return acquireError(err, this.displayPath, this.connection);
  }

  /** A busy lock is a LockTimeoutError; a wait spent without a live session is not. */
  private timeoutError(waiter: Waiter, waitTimeoutMs: number): Error {
    const session = this.connection.current;
    // A new session after this process stalled (paused past its timeout) is not ZooKeeper's fault.
    if (session.state !== 'connected' && !this.connection.afterStall) {
      return new ZooKeeperUnavailableError(
        session.connectionString,
        waitTimeoutMs,
        `while waiting for lock "${this.displayPath}" (session ${session.state})`,
      );
    }
    return new LockTimeoutError(this.displayPath, waitTimeoutMs, this.holdersAhead(waiter));
  }

  private holdersAhead(waiter: Waiter): number {
    const local = this.waiters.indexOf(waiter) + (this.holder ? 1 : 0);
    return Math.max(local, waiter.contender?.ahead ?? 0);
  }

  private remember(name: string): void {
    this.released.add(name);
    if (this.released.size > RELEASED_MEMORY) {
      this.released.delete(this.released.values().next().value as string);
    }
  }
}
