import {
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  ZooKeeperUnavailableError,
} from '../errors';
import type { HeldLock } from '../held-lock';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { isSessionGone } from '../zookeeper/zk-errors';
import { acquireError } from './acquire-error';
import { Contender, ContenderContext } from './contender';
import type { LockDriver } from './lock-driver';

/** What a queue needs from the client that owns it. */
export interface QueueHost {
  readonly connection: ZkConnection;
  readonly nodeData: Buffer;
  readonly maxNodesPerPath: number;
  /** Whether anyone listens for lost locks on the client (then every holder watches its node). */
  readonly watchesLoss: boolean;
  onIdle(queue: { readonly lockPath: string; readonly idle: boolean }): void;
  onLost(lock: HeldLock, error: LockLostError): void;
  onReleased(lock: HeldLock): void;
}

/** One local caller waiting for a lock (or trying once). */
export interface Waiter {
  readonly tryOnly: boolean;
  /** The node this caller waits on; several callers of one batch share a node. */
  contender?: Contender;
  done: boolean;
  resolve(lock: HeldLock | null): void;
  reject(error: Error): void;
  cleanup(): void;
}

const RELEASED_MEMORY = 64;

/**
 * The machinery every lock recipe of one path in one process shares (docs/design.md §3): the
 * local FIFO of callers with their timeouts, aborts and tries; batching callers that wait
 * together onto one node, at most `maxNodesPerPath` nodes at a time; dropping nodes nobody needs
 * any more; the names of our released nodes; and telling close() when nothing is left.
 *
 * A recipe (the mutex's LockQueue, the read side's ReadQueue) says when a node's callers hold
 * (`pump`), how a grant and a release work, and what a lost or suspended session does to its
 * holders. Its node naming and holding rule come from its LockDriver.
 */
export abstract class WaiterQueue implements ContenderContext {
  readonly released = new Set<string>();
  protected readonly waiters: Waiter[] = [];
  /** Node requests still under way: deletions, and creates of nodes (maybe given up already). */
  protected pending = 0;
  private idleWaiters: Array<() => void> = [];
  private creationScheduled = false;

  constructor(
    protected readonly host: QueueHost,
    readonly lockPath: string,
    readonly displayPath: string,
    readonly driver: LockDriver,
  ) {}

  get connection(): ZkConnection {
    return this.host.connection;
  }
  get nodeData(): Buffer {
    return this.host.nodeData;
  }
  /** Nothing held, waited for or under way. */
  abstract get idle(): boolean;

  /** Waits for the lock; rejects with LockTimeoutError / LockAbortedError when it gives up. */
  acquire(options: { waitTimeoutMs?: number; signal?: AbortSignal }): Promise<HeldLock> {
    const { waitTimeoutMs, signal } = options;
    if (signal?.aborted) {
      return Promise.reject(new LockAbortedError(this.displayPath, signal.reason));
    }
    return new Promise<HeldLock>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void =>
        this.cancel(waiter, new LockAbortedError(this.displayPath, signal!.reason));
      const waiter: Waiter = {
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

  /**
   * The lock only if it can be had right now (one round trip); null otherwise. Without a
   * connected session it answers at once with ZooKeeperUnavailableError (it waited for a new
   * session for up to connectTimeoutMs: issue #19 §6), and a try under way fails so as soon as
   * the connection drops (failTries).
   */
  tryAcquire(): Promise<HeldLock | null> {
    if (this.busyLocally()) return Promise.resolve(null);
    const session = this.connection.current;
    if (session.state !== 'connected') return Promise.reject(this.noSessionForTry());
    return new Promise((resolve, reject) => {
      this.waiters.push({ tryOnly: true, done: false, resolve, reject, cleanup: () => undefined });
      this.pump();
    });
  }

  /** Called by HeldLock when its last owner releases it, and by close(); runs once per lock. */
  release(lock: HeldLock): Promise<void> {
    lock.releasing ??= this.releaseOnce(lock);
    return lock.releasing;
  }

  /** Resolves once nothing is held, waited for or under way (close() waits for it). */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** The connection dropped: tries under way answer now, rather than wait for a reconnect. */
  failTries(): void {
    for (const w of [...this.waiters]) if (w.tryOnly) this.cancel(w, this.noSessionForTry());
  }

  private noSessionForTry(): ZooKeeperUnavailableError {
    const session = this.connection.current;
    const what = `a try of lock "${this.displayPath}" (the session is ${session.state}, and a try does not wait for one)`;
    return new ZooKeeperUnavailableError(session.connectionString, 0, what);
  }

  /** Ends every wait (client closing); holders are left to the caller. */
  failAll(error: Error): void {
    for (const w of [...this.waiters]) this.cancel(w, error);
  }

  abstract onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void;
  abstract onSuspended(session: ZkSession): void;
  abstract onReconnected(session: ZkSession): void;

  // ---- ContenderContext ---------------------------------------------------------------------

  onPosition(): void {
    this.pump();
  }

  abstract onVanished(contender: Contender): void;

  // ---- what a recipe decides ----------------------------------------------------------------

  /** Grants what can be granted now, then `scheduleNode()` and `dropLosingTries()`. */
  protected abstract pump(): void;
  protected abstract releaseOnce(lock: HeldLock): Promise<void>;
  /** The nodes of ours that hold now. */
  protected abstract heldNodes(): Iterable<Contender>;
  /** A try fails at once, without a request (the mutex: held or waited for in this process). */
  protected busyLocally(): boolean {
    return false;
  }
  /** Whether a new node may be queued now (besides the node limit). */
  protected mayQueueNode(): boolean {
    return true;
  }
  /**
   * How many callers, holding or waiting, are ahead of this one (LockTimeoutError's message);
   * undefined while its place is not known (no node yet, or no listing yet).
   */
  protected callersAhead(waiter: Waiter): number | undefined {
    const node = waiter.contender;
    return node?.predecessor === undefined ? undefined : node.ahead;
  }

  // ---- shared machinery ---------------------------------------------------------------------

  /** Callers without a node that arrive in the same tick share one, created in a microtask. */
  protected scheduleNode(): void {
    if (this.creationScheduled || !this.waiters.some((w) => !w.contender)) return;
    this.creationScheduled = true;
    queueMicrotask(() => {
      this.creationScheduled = false;
      this.queueNode();
    });
  }

  /** A try that learned its place without being allowed to hold gives up at once. */
  protected dropLosingTries(): void {
    for (const w of [...this.waiters]) {
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

  /** Callers whose node is gone (lost session, deleted) queue again on a new one. */
  protected requeue(gone: (c: Contender) => boolean): void {
    for (const w of this.waiters) {
      if (w.contender && gone(w.contender)) {
        w.contender.abandon();
        w.contender = undefined;
      }
    }
    this.pump();
  }

  /** Takes the caller out of the local queue and stops its timer and abort listener. */
  protected finish(waiter: Waiter): void {
    waiter.done = true;
    waiter.cleanup();
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  /** Ends a wait with an error, or with null for a try; a node nobody needs any more goes. */
  protected cancel(waiter: Waiter, error: Error | null): void {
    if (waiter.done) return;
    this.finish(waiter);
    const node = waiter.contender;
    if (error) waiter.reject(error);
    else waiter.resolve(null);
    if (node && !this.isHeld(node) && !this.waiters.some((w) => w.contender === node)) {
      this.removeNode(node);
    }
    this.pump();
    this.checkIdle();
  }

  /** Deletes one of our nodes in the background; close() waits for it. */
  protected removeNode(node: Contender): void {
    this.pending++;
    void node.remove().finally(() => {
      this.pending--;
      this.checkIdle();
    });
  }

  protected checkIdle(): void {
    if (!this.idle) return;
    this.host.onIdle(this);
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** A released node of ours: never waited on again, even if a stale listing still shows it. */
  protected remember(name: string): void {
    this.released.add(name);
    if (this.released.size > RELEASED_MEMORY) {
      this.released.delete(this.released.values().next().value as string);
    }
  }

  /** One new node for every caller still without one (they asked before anything after it). */
  private queueNode(): void {
    const batch = this.waiters.filter((w) => !w.contender);
    if (batch.length === 0 || !this.mayQueueNode()) return;
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
          // Only documented errors, naming the lock the caller was waiting for.
          const error = acquireError(err, this.displayPath, this.connection);
          for (const w of members) this.cancel(w, error);
        },
      )
      .finally(() => {
        this.pending--;
        this.checkIdle();
      });
  }

  private isHeld(node: Contender): boolean {
    for (const held of this.heldNodes()) if (held === node) return true;
    return false;
  }

  private nodeCount(): number {
    const nodes = new Set<Contender>(this.heldNodes());
    for (const w of this.waiters) if (w.contender) nodes.add(w.contender);
    return nodes.size;
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
    return new LockTimeoutError(this.displayPath, waitTimeoutMs, this.callersAhead(waiter));
  }
}
