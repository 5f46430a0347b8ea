// ZkLockClient: the framework-free entry point, its owner scopes, its wiring to the sessions and
// its shutdown.
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { LockModeError, type LockLostError, ClientClosedError } from '../errors';
import { emitSafely } from '../events';
import { applyNamespace } from '../paths';
import type { LockKind } from '../engine/lock-drivers';
import { type HeldLock, LockHandleView, ReadOnlyLockView } from '../engine/held-lock';
import {
  LockQueues,
  documentedError,
  noSessionError,
  ParentReaper,
  checkWaitTimeout,
  waitOutcomeOf,
  type QueueContext,
} from '../engine/waiter-queue';
import { ElectionRegistry, type LeaderLatch } from '../recipes/leader-latch';
import type { ElectionOptions } from '../recipes/election-types';
import { acquireAll, type MultiLockHost } from '../recipes/multi-lock';
import { SemaphoreRecipe } from '../recipes/semaphore';
import type {
  AcquireOptions,
  ConnectionState,
  LockHandle,
  LockEvents,
  LockInspection,
  LockSide,
  LockView,
  MultiLockHandle,
  Semaphore,
  SemaphoreOptions,
  SessionInfo,
  ZkLockClientOptions,
} from '../types';
import { SessionPool } from '../zookeeper/zk-connection';
import { ZkCredentials, withoutSecrets } from '../zookeeper/zk-credentials';
import type { ZkSession } from '../zookeeper/zk-session';
import { CLIENT_INTERNALS, type ClientInternals } from './client-internals';
import {
  checkClientOptions,
  CLIENT_DEFAULTS,
  lockNodeData,
  NAMESPACE_ACL,
  warnOf,
  warnOfPlainTextAuth,
} from './client-options';
import { inspectLock } from '../recipes/inspect';
import { checkNamespace } from './namespace-check';
import type { ZkConnection } from '../zookeeper/zk-connection';

const DEFAULTS = CLIENT_DEFAULTS;

/**
 * The framework-free entry point: fair, reentrant, fenced locks on ZooKeeper.
 * Events: 'acquired', 'released', 'timeout', 'lost', 'state', 'session' (see LockEvents).
 */
export class ZkLockClient extends EventEmitter {
  private readonly owners = new AsyncLocalStorage<OwnerScope>();
  private readonly reaper: ParentReaper;
  private readonly queues: LockQueues;
  /** The data of every node the client creates (host, pid, the nodeData option). */
  private readonly nodeData: Buffer;
  /**
   * Made on first use (semaphore(), election()): the session events of a client without
   * semaphores or elections reach only its lock queues.
   */
  private semaphoreRecipe?: SemaphoreRecipe;
  private electionRegistry?: ElectionRegistry;
  /**
   * Set as close() is called, before any shutdown listener runs: a close() from one gets this
   * promise, and anything else asked from then on fails with ClientClosedError.
   */
  private closing?: Promise<void>;

  private constructor(
    private readonly pool: SessionPool,
    private readonly options: ZkLockClientOptions,
  ) {
    super();
    // In dependency order: the reaper, then what hands it paths (queues; semaphores and elections
    // on first use), each on its lock path's session (docs/design.md "Sessions as a pool").
    this.nodeData = lockNodeData(options.nodeData);
    this.reaper = new ParentReaper(
      (lockPath) => pool.connectionOf(lockPath),
      options.parentCleanupDelayMs ?? DEFAULTS.parentCleanupDelayMs,
    );
    // In member order: LockQueues picks a path's context by sessionIndexOf, as the pool does.
    const maxNodesPerPath = Math.max(1, options.maxNodesPerPath ?? DEFAULTS.maxNodesPerPath);
    const contexts = pool.members.map((member, index) =>
      this.queueContext(this.nodeData, maxNodesPerPath, member, index),
    );
    this.queues = new LockQueues(contexts, this.reaper, {
      maxWaitersPerPath: options.maxWaitersPerPath ?? DEFAULTS.maxWaitersPerPath,
      maxWaiters: options.maxWaiters ?? DEFAULTS.maxWaiters,
    });
    this.watchSessions();
    CLIENT_INTERNALS.set(this, this.internals());
  }

  /** Connects; rejects with ZooKeeperUnavailableError if no session within connectTimeoutMs. */
  static async connect(options: ZkLockClientOptions): Promise<ZkLockClient> {
    checkClientOptions(options, 'ZkLockClient.connect()');
    const credentials = ZkCredentials.from(options);
    warnOfPlainTextAuth(options, credentials);
    const sessionTimeoutMs = options.sessionTimeoutMs ?? DEFAULTS.sessionTimeoutMs;
    const pool = await SessionPool.open(
      {
        connectionString: options.connectionString,
        sessionTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
        requestTimeoutMs: options.requestTimeoutMs ?? sessionTimeoutMs,
        credentials,
        firstXid: options.firstXid,
        namespace: options.namespace || undefined,
      },
      options.sessions ?? DEFAULTS.sessions,
    );
    const warn = (message: string) => warnOf(options, message, NAMESPACE_ACL);
    await checkNamespace(
      pool.members[0].current,
      credentials,
      options.namespace || undefined,
      warn,
    ).catch(async (err: unknown) => {
      await pool.close();
      throw err;
    });
    // Credentials stay inside the connection (ZkCredentials): never on the client's own options.
    return new ZkLockClient(pool, withoutSecrets(options));
  }

  /**
   * The client's state, from all its sessions': CONNECTED once every session is, SUSPENDED or
   * LOST while any is, RECONNECTED when all are back (`sessions` has each session's own).
   */
  get state(): ConnectionState {
    return this.pool.state;
  }

  /** Hex id of the current session (with several sessions, the first; `sessions` lists all). */
  get sessionId(): string {
    return this.pool.members[0].current.id;
  }

  /** Every session of the client (option `sessions`), with its id and own state. */
  get sessions(): SessionInfo[] {
    return this.pool.sessions;
  }

  get connectionString(): string {
    return this.options.connectionString;
  }

  /** The path prefix of every lock (option `namespace`), if any. */
  get namespace(): string | undefined {
    return this.options.namespace;
  }

  /**
   * Waits for the lock. Inside a withLock() scope (or a @DistributedLock method) that holds
   * `path`, re-enters at once without ZooKeeper traffic; otherwise the returned handle is the
   * owner and must be released. It never changes the caller's async context: only withLock
   * creates ownership scopes, so sibling tasks can never re-enter each other's locks.
   */
  acquire(path: string, options: AcquireOptions = {}): Promise<LockHandle> {
    return this.take(path, 'mutex', options) as Promise<LockHandle>;
  }

  /** Takes the lock only if nobody holds or waits for it; null otherwise. */
  tryAcquire(path: string): Promise<LockHandle | null> {
    return this.take(path, 'mutex', 'try');
  }

  /**
   * The read side of the read/write lock on `path` (Curator InterProcessReadWriteLock's protocol,
   * docs/design.md "The lock family"): readers share, and hold unless a writer queued ahead.
   * Inside a scope that holds the write lock, a read re-enters it (downgrade).
   */
  readLock(path: string): LockSide {
    return this.side(path, 'read');
  }

  /**
   * The write side: exclusive with every reader and writer of `path`. In a scope that holds only
   * the read lock it fails at once with LockModeError (an upgrade would wait for itself).
   */
  writeLock(path: string): LockSide {
    return this.side(path, 'write');
  }

  /**
   * Runs `fn` holding the lock, in a new owner scope: code it runs (and awaits) re-enters the
   * lock instead of waiting for itself. Releases in `finally`.
   */
  async withLock<T>(
    path: string,
    fn: (lock: LockHandle) => Promise<T> | T,
    options?: AcquireOptions,
  ): Promise<T> {
    const lock = await this.acquire(path, options);
    return this.runOwning([lock], lock, fn);
  }

  private side(path: string, kind: 'read' | 'write'): LockSide {
    const side: LockSide = {
      acquire: (options = {}) => this.take(path, kind, options) as Promise<LockHandle>,
      tryAcquire: () => this.take(path, kind, 'try'),
      withLock: async (fn, options) => {
        const lock = await side.acquire(options);
        return this.runOwning([lock], lock, fn);
      },
    };
    return side;
  }

  /**
   * Takes several locks as one, all or nothing, in one canonical order (so {a, b} and {b, a}
   * cannot deadlock) within one shared `waitTimeoutMs`; on failure those taken are released
   * first. The signal aborts when any member is lost (docs/design.md "The lock family").
   */
  acquireAll(paths: readonly string[], options: AcquireOptions = {}): Promise<MultiLockHandle> {
    const host: MultiLockHost = {
      lockPathOf: (path) => applyNamespace(this.options.namespace, path),
      acquire: (path, opts) => this.acquire(path, opts),
      onLoss: (lock, listener) => (lock as LockHandleView).lock.onLoss(listener),
    };
    return acquireAll(host, paths, options);
  }

  /**
   * A counting semaphore: at most `maxLeases` holders at once across every process using `path`
   * (another maxLeases than the holders' fails with LockModeError), laid out as Curator's
   * InterProcessSemaphoreV2 (docs/design.md "The lock family"). Throws InvalidLockPathError /
   * InvalidLockOptionsError now.
   */
  semaphore(path: string, options: SemaphoreOptions): Semaphore {
    return this.semaphores().open(path, options?.maxLeases);
  }

  /** acquireAll, then runs `fn` in a new owner scope that holds every path (see withLock). */
  async withLockAll<T>(
    paths: readonly string[],
    fn: (locks: MultiLockHandle) => Promise<T> | T,
    options?: AcquireOptions,
  ): Promise<T> {
    const multi = await this.acquireAll(paths, options);
    return this.runOwning(multi.locks, multi, fn);
  }

  /**
   * A leader election on `path`, laid out like Curator's LeaderLatch (Java services join it;
   * docs/design.md "Leader election"). Sends nothing until start() or whenLeader(); leading is
   * held like a lock (signal, fencing token). Throws InvalidLockPathError /
   * InvalidLockOptionsError / ClientClosedError now, and start() ClientClosedError after close().
   */
  election(path: string, options: ElectionOptions = {}): LeaderLatch {
    const lockPath = applyNamespace(this.options.namespace, path);
    if (this.closed) throw new ClientClosedError(path, 'lead');
    return this.elections().open(path, lockPath, options);
  }

  /** Whether the current async context holds `path`. */
  isHeld(path: string): boolean {
    return !!this.heldIn(path);
  }

  /**
   * The lock on `path` that the current async context holds through withLock() (or a
   * @DistributedLock method), for its fencing token, signal and state; undefined otherwise.
   * Read-only: it has no release() and adds no hold, so the owner's release still frees the lock.
   */
  heldLock(path: string): LockView | undefined {
    const lock = this.heldIn(path);
    return lock && new ReadOnlyLockView(lock);
  }

  /** The hold of `path` (mutex, else write, else read) in the current async context. */
  private heldIn(path: string): HeldLock | undefined {
    const full = applyNamespace(this.options.namespace, path);
    const scope = this.owners.getStore();
    return (
      scope?.active(full) ??
      scope?.active(ownerKey(full, 'write')) ??
      scope?.active(ownerKey(full, 'read'))
    );
  }

  /**
   * Holders and queue of a lock path in the order they came, with what each node's data records:
   * the readers that hold together, or the one writer or mutex holder.
   */
  async inspect(path: string): Promise<LockInspection> {
    // async: an invalid path rejects the promise, as acquire's does, rather than throwing.
    const full = applyNamespace(this.options.namespace, path);
    return this.look(path, (session) => inspectLock(session, path, full));
  }

  /** Releases every held lock at once (others need not wait for a session timeout), then closes. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    // Stored before the shutdown starts: it runs listeners (a lock's 'lost') that may call close().
    let settle!: (shutdown: Promise<void>) => void;
    this.closing = new Promise<void>((resolve) => (settle = resolve));
    settle(this.shutdown(this.options.sessionTimeoutMs ?? DEFAULTS.sessionTimeoutMs));
    return this.closing;
  }

  /** The diagnostics only the NestJS layer reads (client-internals.ts): closures, not methods. */
  private internals(): ClientInternals {
    const pool = this.pool;
    return {
      semaphoreOfMutex: (path) => this.semaphoreRecipe?.semaphoreOfMutex(path),
      get connectionFailure() {
        return pool.failure;
      },
      get roundTripMs() {
        return pool.roundTrips.timeoutMs;
      },
      sessionTimeoutMs: this.options.sessionTimeoutMs ?? DEFAULTS.sessionTimeoutMs,
    };
  }

  // ---- internals ------------------------------------------------------------------------------

  private get closed(): boolean {
    return this.closing !== undefined;
  }

  /** The client's semaphores, made by the first semaphore(). */
  private semaphores(): SemaphoreRecipe {
    this.semaphoreRecipe ??= new SemaphoreRecipe(
      {
        connectionOf: (lockPath) => this.pool.connectionOf(lockPath),
        nodeData: this.nodeData,
        lockPathOf: (path) => applyNamespace(this.options.namespace, path),
        acquire: (path, opts) => this.acquire(path, opts),
        tryAcquire: (path) => this.tryAcquire(path),
        look: (path, read) => this.look(path, read),
      },
      this.reaper,
    );
    return this.semaphoreRecipe;
  }

  /** The client's elections, made by the first election(); their paths are kept from cleanup. */
  private elections(): ElectionRegistry {
    if (this.electionRegistry) return this.electionRegistry;
    const registry = new ElectionRegistry(
      (lockPath) => this.pool.connectionOf(lockPath),
      (lockPath) => this.reaper.schedule(lockPath),
    );
    this.reaper.keepWhile((lockPath) => registry.has(lockPath));
    return (this.electionRegistry = registry);
  }

  /** A read-only look at `path` (inspect): ClientClosedError once closed; documented errors. */
  private async look<T>(path: string, read: (session: ZkSession) => Promise<T>): Promise<T> {
    if (this.closed) throw new ClientClosedError(path, 'inspect');
    const connection = this.pool.connectionOf(applyNamespace(this.options.namespace, path));
    const session = await connection.ready().catch((err: unknown) => {
      throw noSessionError(err, path);
    });
    return read(session).catch((err: unknown) => {
      throw documentedError(err, path, connection);
    });
  }

  /** Runs `fn` in a new owner scope holding `locks`; releases `owner` in finally. */
  private async runOwning<H extends { release(): Promise<void> }, T>(
    locks: readonly LockHandle[],
    owner: H,
    fn: (owner: H) => Promise<T> | T,
  ): Promise<T> {
    const held = locks.map((lock) => (lock as LockHandleView).lock);
    const scope = new OwnerScope(this.owners.getStore(), held);
    try {
      // close() (or a loss) may have ended the hold between the grant and this turn.
      if (this.closed) throw new ClientClosedError(locks[0].path);
      const lost = held.find((lock) => lock.state === 'lost');
      if (lost) throw lost.signal.reason;
      return await this.owners.run(scope, () => fn(owner));
    } finally {
      await owner.release();
    }
  }

  /**
   * One acquire or try (`'try'`) of `path`: re-entry in the caller's owner scope, else a wait in
   * the path's queue, with the client's events around it. Hands on to the queue last.
   */
  private take(
    path: string,
    kind: LockKind,
    request: AcquireOptions | 'try',
  ): Promise<LockHandle | null> {
    let full: string;
    try {
      full = applyNamespace(this.options.namespace, path);
      if (request !== 'try') checkWaitTimeout(path, request);
      if (this.closing) throw new ClientClosedError(path);
    } catch (err) {
      return Promise.reject(err);
    }
    // The call's template travels with its events (telemetry's labels), only when given.
    const template = request === 'try' ? undefined : request.pathTemplate;
    const tagged = <E extends object>(event: E): E =>
      template === undefined ? event : { ...event, pathTemplate: template };
    // Re-entry, a refused upgrade, a lock this scope lost: the scope decides (OwnerScope).
    const decision = this.owners.getStore()?.decide(full, path, kind);
    if (decision && 'reenter' in decision) {
      const held = decision.reenter;
      held.enter();
      this.emit(
        'acquired',
        tagged({ path, waitMs: 0, fencingToken: held.fencingToken, reentrant: true }),
      );
      return Promise.resolve(new LockHandleView(held));
    }
    if (decision) return Promise.reject(decision.fail);
    const startedAt = Date.now();
    let granted: Promise<HeldLock | null>;
    try {
      // LockModeError (another kind uses the path here) before the `waiting` event.
      granted = this.queues.acquire(full, path, kind, request);
    } catch (err) {
      return Promise.reject(err);
    }
    this.notify('waiting', () => tagged({ path }));
    return granted.then(
      (lock) => {
        const waitMs = Date.now() - startedAt;
        this.notify('waited', () =>
          tagged({ path, outcome: lock ? ('acquired' as const) : ('busy' as const), waitMs }),
        );
        if (!lock) return null;
        this.notify('acquired', () =>
          tagged({ path, waitMs, fencingToken: lock.fencingToken, reentrant: false }),
        );
        return new LockHandleView(lock);
      },
      (err) => {
        this.notify('waited', () =>
          tagged({ path, outcome: waitOutcomeOf(err), waitMs: Date.now() - startedAt, error: err }),
        );
        if (err?.name === 'LockTimeoutError') {
          this.emit('timeout', tagged({ path, waitTimeoutMs: err.waitTimeoutMs }));
        }
        throw err;
      },
    );
  }

  /** Emits `event`, building its payload only when someone listens (a hot path: most don't). */
  private notify<K extends keyof LockEvents>(event: K, payload: () => LockEvents[K]): void {
    if (this.listenerCount(event) > 0) this.emit(event, payload());
  }

  /** A listener that throws disturbs no lock: its error goes to 'error' (emitSafely). */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    return emitSafely(this, event, args);
  }

  // ---- the wiring to the sessions, and the shutdown -------------------------------------------

  /** What the lock queues of member `index` get: its connection and the client's events. */
  private queueContext(
    nodeData: Buffer,
    maxNodesPerPath: number,
    connection: ZkConnection,
    index: number,
  ): QueueContext {
    return {
      connection,
      nodeData,
      maxNodesPerPath,
      watchesLoss: () => this.listenerCount('lost') > 0,
      released: (lock) => {
        if (this.listenerCount('released') === 0) return;
        this.emit('released', { path: lock.path, holdMs: Date.now() - lock.acquiredAt });
      },
      lost: (lock, error) => {
        const session = { index, id: lock.session.id, state: connection.state };
        this.emit('lost', { path: lock.path, error, session });
      },
    };
  }

  /** The pool's events as the client's; member session events to its queues, leases, elections. */
  private watchSessions(): void {
    this.pool.on('member', (session: SessionInfo) => this.emit('session', session));
    this.pool.on('state', (state: ConnectionState) => this.emit('state', state));
    for (const member of this.pool.members) {
      member.on(
        'session-lost',
        (session: ZkSession, reason: 'session-expired' | 'connection-lost') => {
          this.queues.onSessionLost(member, session, reason);
          this.semaphoreRecipe?.onSessionLost(session, reason);
          this.electionRegistry?.onSessionLost(session, reason);
        },
      );
      member.on('session', (session: ZkSession) => this.watchSession(member, session));
      this.watchSession(member, member.current);
    }
  }

  /** The suspensions and reconnections of `session`, one session of pool member `member`. */
  private watchSession(member: ZkConnection, session: ZkSession): void {
    session.on('suspended', () => {
      this.queues.onSuspended(member, session);
      this.semaphoreRecipe?.onSuspended(session);
      this.electionRegistry?.onSuspended(session);
    });
    session.on('reconnected', () => {
      this.queues.onReconnected(member, session);
      this.semaphoreRecipe?.onReconnected(session);
      this.electionRegistry?.onReconnected(session);
    });
  }

  /**
   * Releases, lets node requests finish and cleans up within sessionTimeoutMs (a session that
   * cannot reach ZooKeeper by then is lost), then closes the sessions within requestTimeoutMs more.
   */
  private async shutdown(sessionTimeoutMs: number): Promise<void> {
    // Elections first: the next participant (maybe in another process) leads at once.
    const elections = this.electionRegistry?.closeAll();
    const semaphores = this.semaphoreRecipe?.close();
    const queues = this.queues.all();
    for (const q of queues) q.failAll(new ClientClosedError(q.displayPath));
    const releases = queues.flatMap((q) =>
      q.holders.map((holder) => {
        holder.lose('client-closed', 'the ZkLockClient was closed');
        return holder.end();
      }),
    );
    const graceful = async (): Promise<void> => {
      await Promise.all([elections, ...releases, semaphores]);
      // Nodes still being created for callers that gave up are deleted once created: wait, so
      // that the lock paths are empty when the reaper removes them.
      await Promise.all(queues.map((q) => q.whenIdle()));
      await this.reaper.flush();
    };
    await settleWithin(graceful(), sessionTimeoutMs);
    await this.pool.close();
    this.removeAllListeners();
  }
}

/** Owner-scope key of a hold: the lock path, plus the side for a read/write lock. */
function ownerKey(lockPath: string, kind: 'mutex' | 'read' | 'write'): string {
  return kind === 'mutex' ? lockPath : `${lockPath}\u0000${kind}`;
}

/**
 * The locks an async execution context owns (kept in AsyncLocalStorage). A new scope starts
 * from a copy of its parent's, so nested code sees the outer locks and can re-enter them, while
 * siblings that started before an acquisition do not.
 */
class OwnerScope {
  private readonly held: Map<string, HeldLock>;

  /** A scope with its parent's locks and `locks` (the ones withLock just took). */
  constructor(parent?: OwnerScope, locks: readonly HeldLock[] = []) {
    this.held = new Map(parent?.held);
    for (const lock of locks) this.held.set(ownerKey(lock.lockPath, lock.kind), lock);
  }

  active(path: string): HeldLock | undefined {
    const lock = this.held.get(path);
    return lock?.active ? lock : undefined;
  }

  /**
   * The loss of a lock of `lockPath` this scope lost and still holds (see HeldLock), on the side
   * `kind` takes or, for a read/write lock, the other one: a read in a lost write's scope would
   * re-enter it (a downgrade), a write in a lost read's scope would wait for it (an upgrade).
   */
  private lost(lockPath: string, kind: 'mutex' | 'read' | 'write'): LockLostError | undefined {
    const kinds = kind === 'mutex' ? (['mutex'] as const) : (['read', 'write'] as const);
    for (const side of kinds) {
      const lost = this.held.get(ownerKey(lockPath, side))?.lostWhileHeld;
      if (lost) return lost;
    }
    return undefined;
  }

  /**
   * What a take of `lockPath` (namespace applied; `path` as the caller named it) as `kind` does
   * in this scope: re-enter a lock it holds, fail at once, or (undefined) wait in the queue.
   */
  decide(
    lockPath: string,
    path: string,
    kind: 'mutex' | 'read' | 'write',
  ): { reenter: HeldLock } | { fail: Error } | undefined {
    const key = ownerKey(lockPath, kind);
    // A read in a scope that holds the write lock re-enters it (a downgrade: the write node
    // stays until both are released, so no writer queued behind it can get in meanwhile).
    const held =
      this.active(key) ?? (kind === 'read' ? this.active(ownerKey(lockPath, 'write')) : undefined);
    if (held) return { reenter: held };
    // This scope lost this lock but still holds its place here: a take would wait for itself
    // (its node may outlive the loss) or be granted a fresh lock beside the one it lost, so it
    // fails as re-entering the lost lock would (docs/design.md "What holding means").
    const lost = this.lost(lockPath, kind);
    if (lost) return { fail: lost };
    if (kind === 'write' && this.active(ownerKey(lockPath, 'read'))) {
      return {
        fail: new LockModeError(
          path,
          'this scope holds its read lock, and a write lock would wait for that read lock forever',
          'Release the read lock first, or take the write lock from the start (a write lock can be downgraded to a read lock, not upgraded)',
        ),
      };
    }
    return undefined;
  }
}

/** Resolves once `work` has, or after `ms`, whichever comes first (the timer is cleared). */
function settleWithin(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
