// The public types of the core: the client's options, the handles it returns and its events.
import type { LockLossReason } from './errors';
import type { ConnectionOptions } from 'node:tls';

export interface ZkLockClientOptions {
  /**
   * "host:port,host:port" of the ZooKeeper ensemble, optionally followed by a chroot path
   * ("zk1:2181,zk2:2181/app"). A malformed one fails connect() with InvalidLockOptionsError.
   */
  connectionString: string;
  /** Requested session timeout; the server may clamp it. Default 10_000. */
  sessionTimeoutMs?: number;
  /** How long connect() waits for the first session. Default 10_000. */
  connectTimeoutMs?: number;
  /** Timeout of each ZooKeeper request. Default: the session timeout. */
  requestTimeoutMs?: number;
  /**
   * How many ZooKeeper sessions the client keeps (1 to 16). A path always uses the same one (by a
   * hash of its path; a semaphore's nodes go with its path), so FIFO, re-entry and mode checks are
   * one session's, and a lost session loses only its paths' locks. More sessions serve more
   * requests at once, at a connection each against the servers' `maxClientCnxns`. Default 1.
   */
  sessions?: number;
  /**
   * Path prefix for every lock, e.g. "/my-app". Created as a persistent node when missing, with
   * the `acl` below (with `acl: 'creator'`, at connect), and never removed
   * (docs/guides/security.md, "Preparing a namespace").
   */
  namespace?: string;
  /**
   * How long an empty lock node stays before this client removes it. Default 2_000. Lock paths
   * are CONTAINER nodes: the servers remove empty ones too, also after this process is gone.
   */
  parentCleanupDelayMs?: number;
  /**
   * Most ZooKeeper nodes one process keeps per path, each serving in turn the callers waiting when
   * it was created; later callers wait locally until one goes. Default 2: the holder plus one for
   * callers since. More nodes queue late callers sooner, in smaller batches (more requests).
   */
  maxNodesPerPath?: number;
  /**
   * Most callers of this client waiting for one lock path at a time (read and write sides
   * together; re-entries and tries do not wait). One more fails at once with LockQueueFullError
   * (HTTP 429 in the NestJS layer) instead of growing the queue. Default 1_000.
   */
  maxWaitersPerPath?: number;
  /** Most callers waiting for any lock at a time (see maxWaitersPerPath). Default 10_000. */
  maxWaiters?: number;
  /** Extra fields in each lock node's data (besides host and pid), e.g. { app: 'orders' }. */
  nodeData?: Record<string, string | number>;
  /**
   * Digest credentials `"user:password"` (one or several), sent on every connection of every
   * session, as ZooKeeper's `addauth digest`. Never logged, never in error messages or inspect().
   * Servers that refuse them (AUTH_FAILED) end the session: ZooKeeperAuthFailedError, no retry.
   */
  auth?: string | readonly string[];
  /**
   * ACL of every node this client creates. 'open' (default, OPEN_ACL_UNSAFE): anyone may read,
   * change or delete them. 'creator' (CREATOR_ALL_ACL): only this client's identity (`auth`, or a
   * TLS client certificate) may, others get LockAccessDeniedError; a lock path whose ACL grants
   * others is refused with UnexpectedAclError, and nothing of ours is left in it.
   */
  acl?: 'open' | 'creator';
  /**
   * TLS to the servers' `secureClientPort`: `true` (system CAs) or node:tls options as PEM text,
   * `{ ca, cert, key, passphrase, servername, ... }` (`cert` + `key` for mutual TLS).
   */
  tls?: boolean | ZkTlsOptions;
  /**
   * @internal The request number (xid) each session starts at, instead of 0: tests start a
   * session just below the 2^31-1 wrap. Not for users.
   */
  firstXid?: number;
  /**
   * Where `connect()` sends its warnings, each once: `auth` without `tls` (the password crosses the
   * network as plain bytes; `ZKLOCK_AUTH_WITHOUT_TLS`), and with `acl: 'creator'` a namespace ACL
   * that grants others or refuses us (`ZKLOCK_NAMESPACE_ACL`). Default: a Node process warning
   * with that code; the NestJS module logs it through Nest's Logger.
   */
  onWarning?: (message: string) => void;
}

export interface AcquireOptions {
  /**
   * Give up with LockTimeoutError after this long; 0 tries once (the lock if it is free now).
   * At most 2^31-1 ms (a Node timer's limit): larger, negative or NaN values are an
   * InvalidLockOptionsError before any request. Default: wait forever.
   */
  waitTimeoutMs?: number;
  /** Abort the wait (LockAbortedError). */
  signal?: AbortSignal;
  /**
   * The path template this call's path was made from (`'/locks/order:<id>'`), carried by its
   * events: telemetry labels the call by it when it is one of its `pathTemplates` and matches
   * the path, else by the best matching template. The NestJS decorators pass their own.
   */
  pathTemplate?: string;
}

/** TLS settings for ZooKeeper's `secureClientPort` (node:tls options; PEM text, not paths). */
export type ZkTlsOptions = Pick<
  ConnectionOptions,
  | 'ca'
  | 'cert'
  | 'key'
  | 'passphrase'
  | 'pfx'
  | 'servername'
  | 'rejectUnauthorized'
  | 'checkServerIdentity'
  | 'minVersion'
  | 'maxVersion'
  | 'ciphers'
>;

/** held: ours; uncertain: disconnected, ownership unknown; lost/released: no longer ours. */
export type LockState = 'held' | 'uncertain' | 'lost' | 'released';

/**
 * What can be read about a held lock. `heldLock(path)` returns only this: its owner (the
 * withLock scope, the @DistributedLock method) releases the lock, not the reader.
 */
export interface LockView {
  /** The lock path as given (without namespace). */
  readonly path: string;
  /** Strictly increasing from one holder of this path to the next (docs/guides/fencing.md). */
  readonly fencingToken: bigint;
  /**
   * Aborts with a LockLostError reason when the lock is lost: its session's loss, or a deletion
   * of its node by another client once watchForLoss() (or a 'lost' listener) watches it.
   * Reading it sends nothing.
   */
  readonly signal: AbortSignal;
  readonly state: LockState;
  /**
   * Watches the lock node (one request), so that its deletion by another client (an operator's
   * force-revoke) aborts `signal` too; returns `signal`. Sends nothing once watching.
   */
  watchForLoss(): AbortSignal;
  /**
   * Throws LockLostError (synchronously) unless the lock is still provably ours: not lost or
   * released, and ZooKeeper heard from within the safe window (2/3 of the session timeout).
   * Call it right before a write, and first thing in timer callbacks under the lock: after a
   * pause (GC, SIGSTOP, a blocked event loop) it notices the loss before any I/O is read.
   */
  assertHeld(): void;
  /** 'uncertain' (disconnected), 'reconnected' (held again, same session). */
  on(event: 'uncertain' | 'reconnected', listener: () => void): this;
  /**
   * 'lost' (LockLostError), once. A listener added after the loss (or after the client's close()
   * released the lock) is called once, asynchronously (in a microtask), with the same error,
   * unless off() removes it first.
   */
  on(event: 'lost', listener: (error: import('./errors').LockLostError) => void): this;
  off(event: string, listener: (...args: any[]) => void): this;
}

/** One acquisition of a lock: a LockView its taker must release. */
export interface LockHandle extends LockView {
  /** Idempotent. For a re-entered handle, only decrements the hold count. */
  release(): Promise<void>;
}

/**
 * Several locks taken as one (`acquireAll`): members in canonical order (sorted lock paths), one
 * fencing token each. Its signal aborts with the first member's LockLostError.
 */
export interface MultiLockHandle {
  /** The paths as given, in the order they were taken. */
  readonly paths: readonly string[];
  /** One handle per path, in the same order. */
  readonly locks: readonly LockHandle[];
  readonly fencingTokens: readonly bigint[];
  /** Aborts when a member is lost (a deletion of a member's node: once watchForLoss()). */
  readonly signal: AbortSignal;
  /** Watches every member's node (see LockView.watchForLoss); returns `signal`. */
  watchForLoss(): AbortSignal;
  /** 'lost' if any member is lost, 'uncertain' if any member is, else 'held' or 'released'. */
  readonly state: LockState;
  /** Idempotent; releases the members in reverse order. */
  release(): Promise<void>;
}

/** `locks.semaphore(path, options)`: shared by every process that uses the path. */
export interface SemaphoreOptions {
  /** How many leases may be held at once, across all processes (an integer >= 1). */
  maxLeases: number;
}

export interface LeaseAcquireOptions extends AcquireOptions {
  /** How many leases to take at once, all or nothing (1..maxLeases). Default 1. */
  leases?: number;
}

/**
 * Leases held on a semaphore. No fencing token: several holders are allowed by design. Its
 * signal aborts with LockLostError when a lease node is gone (session lost, deleted by others
 * once watchForLoss()).
 */
export interface SemaphoreLease {
  readonly path: string;
  /** How many leases this handle holds. */
  readonly leases: number;
  readonly signal: AbortSignal;
  /** Watches the lease nodes (see LockView.watchForLoss); returns `signal`. */
  watchForLoss(): AbortSignal;
  readonly state: LockState;
  on(event: 'uncertain' | 'reconnected', listener: () => void): this;
  /** 'lost' (LockLostError), once; a listener added after the loss is called too (see LockView). */
  on(event: 'lost', listener: (error: import('./errors').LockLostError) => void): this;
  off(event: string, listener: (...args: any[]) => void): this;
  /** Idempotent: deletes the lease nodes. */
  release(): Promise<void>;
}

/**
 * A counting semaphore on ZooKeeper, laid out like Curator's InterProcessSemaphoreV2
 * (`<path>/locks` serialises acquirers, `<path>/leases` holds one node per lease).
 */
export interface Semaphore {
  readonly path: string;
  readonly maxLeases: number;
  acquire(options?: LeaseAcquireOptions): Promise<SemaphoreLease>;
  /** Leases only if they are free right now (and no other caller is taking one); else null. */
  tryAcquire(options?: { leases?: number }): Promise<SemaphoreLease | null>;
  withLease<T>(
    fn: (lease: SemaphoreLease) => Promise<T> | T,
    options?: LeaseAcquireOptions,
  ): Promise<T>;
  /**
   * Who holds a lease and who waits, in the order they came, with what each node's data records
   * (Curator's `getParticipantNodes()`, kazoo's `lease_holders()`).
   */
  inspect(): Promise<SemaphoreInspection>;
}

/** One side of a read/write lock (`locks.readLock(path)`, `locks.writeLock(path)`). */
export interface LockSide {
  acquire(options?: AcquireOptions): Promise<LockHandle>;
  /** The lock only if it can be had now (one round trip); null otherwise. */
  tryAcquire(): Promise<LockHandle | null>;
  /** Runs `fn` holding the lock in a new owner scope (see ZkLockClient.withLock). */
  withLock<T>(fn: (lock: LockHandle) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
}

/** Connection states, as in Curator. */
export type ConnectionState = 'CONNECTED' | 'SUSPENDED' | 'RECONNECTED' | 'LOST' | 'CLOSED';

/** One session of the client (option `sessions`) and its own state. */
export interface SessionInfo {
  /** Its place in the client's sessions, 0 to `sessions` - 1: the same for a path every time. */
  index: number;
  /** Hex id of its current ZooKeeper session. */
  id: string;
  state: ConnectionState;
}

export interface LockNodeInfo {
  name: string;
  sequence: number;
  /** Hex session id of the owner. */
  sessionId: string;
  /** Data the owner recorded: host, pid, nodeData (empty for foreign nodes, e.g. Curator's). */
  data: Record<string, unknown>;
}

/**
 * A lock path's nodes in sequence order (whatever the node style: mutex, read/write, kazoo's),
 * split into those that hold now and those that wait.
 */
export interface LockInspection {
  path: string;
  /** The first holder (the oldest node), or null when nobody holds. */
  holder: LockNodeInfo | null;
  /** Every node that holds now: the readers holding together, or the one writer or mutex holder. */
  holders: LockNodeInfo[];
  /** The nodes that wait, in the order they queued. */
  queue: LockNodeInfo[];
}

/**
 * A semaphore's lease nodes in sequence order. A caller that takes several leases at once holds
 * none until it has all, but its first nodes count against the limit, so they show as holders.
 */
export interface SemaphoreInspection {
  path: string;
  maxLeases: number;
  /** The first `maxLeases` lease nodes: held (counted against the limit). */
  holders: LockNodeInfo[];
  /** The lease nodes beyond the limit: their acquirer waits for room. */
  waiting: LockNodeInfo[];
}

/**
 * How a wait for a lock ended: the lock, `busy` (a try found it taken: the caller skips),
 * `timeout` (LockTimeoutError), `aborted` (LockAbortedError) or `failed` (any other error).
 */
export type WaitOutcome = 'acquired' | 'busy' | 'timeout' | 'aborted' | 'failed';

/** Events of ZkLockClient, for metrics and logs. */
export interface LockEvents {
  /**
   * A caller starts waiting for a lock (acquire or try; not a re-entry). One `waited` follows.
   * `pathTemplate`, here and below: the call's AcquireOptions.pathTemplate, when it gave one.
   */
  waiting: { path: string; pathTemplate?: string };
  /** The wait that `waiting` announced ended, after `waitMs`. */
  waited: {
    path: string;
    outcome: WaitOutcome;
    waitMs: number;
    error?: Error;
    pathTemplate?: string;
  };
  acquired: {
    path: string;
    waitMs: number;
    fencingToken: bigint;
    reentrant: boolean;
    pathTemplate?: string;
  };
  released: { path: string; holdMs: number };
  timeout: { path: string; waitTimeoutMs: number; pathTemplate?: string };
  /** `session`: the session (its index and id) whose lock it was. */
  lost: { path: string; error: import('./errors').LockLostError; session: SessionInfo };
  /**
   * The client's state: CONNECTED once every session is, SUSPENDED or LOST while any session is,
   * RECONNECTED when all are back (the `session` event says which session changed).
   */
  state: ConnectionState;
  /** One session's own state changed (with one session, as `state`). */
  session: SessionInfo;
  /**
   * Emitted by the NestJS layer: a method decorated with `onBusy: 'skip'` found its lock busy and
   * did not run. `where` is "Class.method" (bounded, for metric labels); `path` the concrete
   * path(s), comma-separated.
   */
  skipped: { path: string; where: string; pathTemplate?: string };
  /**
   * A listener of another event threw this; every lock went on as if it had not (the listeners
   * after it were called too). Without an 'error' listener, it is thrown on its own as an
   * uncaught exception; the NestJS module listens and logs it.
   */
  error: unknown;
}

export type { LockLossReason };
