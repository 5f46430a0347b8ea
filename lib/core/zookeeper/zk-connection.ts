/** Owns the client's sessions: each replaced when lost, their states, and which one a path uses. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import type { ConnectionState, SessionInfo } from '../types';
import {
  InvalidLockOptionsError,
  ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
  type ConnectFailure,
} from '../errors';
import { RoundTrips, ZkSession, ZkSessionOptions } from './zk-session';

export interface ZkConnectionOptions extends ZkSessionOptions {
  connectTimeoutMs: number;
}

/**
 * The one way into ZooKeeper: keeps a live session, replacing a lost one, and emits Curator-like
 * 'state' events, 'session-lost' (session, reason) and 'session' (the new one).
 */
export class ZkConnection extends EventEmitter {
  state: ConnectionState = 'LOST';
  /**
   * The current session (connected, suspended, or a new one still connecting), replaced here only,
   * when lost. A field: the engine reads it for every request, and reading it runs nothing.
   */
  current: ZkSession;
  private closed = false;
  private hadSession = false;
  /** The current session replaces one lost because this process stalled, and is not up yet. */
  afterStall = false;
  /** Set when the servers refused our credentials: no new session is tried (it would fail too). */
  failure?: ZooKeeperAuthFailedError;
  /**
   * Runs a function in the async context this connection was opened in: a loss found inside a
   * caller's `withLock` scope must not pass that scope to the new session or the loss listeners,
   * or they would see its holds as their own (docs/design.md "Ownership and batching inside one
   * process").
   */
  private readonly detached = AsyncLocalStorage.snapshot();
  /** Lost sessions still closing themselves (see close()). */
  private readonly lostSessions = new Set<ZkSession>();

  private constructor(private readonly options: ZkConnectionOptions) {
    super();
    this.setMaxListeners(0);
    this.current = this.newSession();
  }

  /** Connects the first session; ZooKeeperUnavailableError if none within connectTimeoutMs. */
  static async open(options: ZkConnectionOptions): Promise<ZkConnection> {
    let connection: ZkConnection;
    try {
      connection = new ZkConnection(options);
    } catch (err) {
      // The connection string is checked when the session is created (checkClientOptions checked
      // it first): its reason, never the string itself, which may carry a password.
      throw new InvalidLockOptionsError(
        'ZkLockClient.connect',
        `connectionString cannot be used (${(err as Error).message})`,
        'Give "host:port,host:port", optionally followed by a chroot path such as "/app"',
      );
    }
    const startedAt = Date.now();
    try {
      await connection.current.waitConnected(options.connectTimeoutMs);
    } catch {
      const session = connection.current;
      await connection.close();
      throw (
        connection.failure ?? connection.unavailable(session, options.connectTimeoutMs, startedAt)
      );
    }
    return connection;
  }

  get requestTimeoutMs(): number {
    return this.options.requestTimeoutMs;
  }

  /** The current session once it is connected. */
  async ready(timeoutMs = this.options.connectTimeoutMs): Promise<ZkSession> {
    const session = this.current;
    if (this.failure) throw this.failure;
    // Connected now (our state follows the current session's events): no need to ask it.
    if (!this.closed && (this.state === 'CONNECTED' || this.state === 'RECONNECTED')) {
      return session;
    }
    const startedAt = Date.now();
    await session.waitConnected(timeoutMs).catch(() => {
      if (this.failure) throw this.failure;
      if (this.current !== session && !this.closed) return; // replaced meanwhile: retry below
      throw this.unavailable(session, timeoutMs, startedAt);
    });
    if (this.current !== session) return this.ready(timeoutMs);
    return session;
  }

  /** No session in time, with the reason a TLS handshake failed (early if every server refused). */
  private unavailable(
    session: ZkSession,
    timeoutMs: number,
    startedAt: number,
  ): ZooKeeperUnavailableError {
    const refused = session.refusedEverywhere;
    return new ZooKeeperUnavailableError(
      this.options.connectionString,
      refused ? Date.now() - startedAt : timeoutMs,
      refused ? 'a session request (every server refused the TLS handshake)' : 'a session request',
      session.lastFailure,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    // A lost session may still be closing itself in the background: closed now, it ends at once
    // unless its close is already on the wire (ZkSession.close), so nothing outlives close().
    await Promise.all([this.current.close(), ...[...this.lostSessions].map((s) => s.close())]);
    this.setState('CLOSED');
    this.removeAllListeners();
  }

  private newSession(): ZkSession {
    const session = new ZkSession(this.options);
    session.on('connected', () => {
      // Like Curator: the first session is CONNECTED, a new one after LOST is RECONNECTED.
      this.setState(this.hadSession ? 'RECONNECTED' : 'CONNECTED');
      this.hadSession = true;
      this.afterStall = false;
      // A server answers again: lost sessions it may have restored close themselves there now.
      for (const lost of this.lostSessions) lost.serverReachable();
    });
    session.on('suspended', () => this.setState('SUSPENDED'));
    session.on('reconnected', () => this.setState('RECONNECTED'));
    session.on('lost', (reason: 'session-expired' | 'connection-lost') =>
      this.detached(() => {
        if (this.closed) return;
        this.setState('LOST');
        this.afterStall = session.lostToStall;
        this.failure = session.authFailure;
        this.lostSessions.add(session);
        session.once('closed', () => this.lostSessions.delete(session));
        this.emit('session-lost', session, reason);
        if (this.failure) return; // the same credentials would be refused again: never retry
        this.current = this.newSession();
        this.emit('session', this.current);
      }),
    );
    session.start();
    return session;
  }

  private setState(state: ConnectionState): void {
    if (this.state === state) return;
    this.state = state;
    this.emit('state', state);
  }
}

/**
 * The client's sessions (docs/design.md "Sessions as a pool"): `size` ZkConnections, and the one
 * each lock path uses (connectionOf). Emits 'state' (the client's, see poolState) and 'member'
 * (SessionInfo: a member's own state changed).
 */
export class SessionPool extends EventEmitter {
  state: ConnectionState;
  private closing = false;

  private constructor(
    readonly members: readonly ZkConnection[],
    /** How long its requests take to be answered, from the replies of every member's sessions. */
    readonly roundTrips: RoundTrips,
  ) {
    super();
    this.setMaxListeners(0);
    this.state = clientState(this.memberStates(), false);
    members.forEach((member, index) => {
      member.on('state', (state: ConnectionState) => {
        if (this.closing) return;
        this.emit('member', { index, id: member.current.id, state } satisfies SessionInfo);
        const next = clientState(this.memberStates(), true);
        if (next === this.state) return;
        this.state = next;
        this.emit('state', next);
      });
    });
  }

  /**
   * Connects `size` sessions at once; when any fails, closes the others and rejects with its
   * error, as one session would (see poolConnectError).
   */
  static async open(options: ZkConnectionOptions, size: number): Promise<SessionPool> {
    const roundTrips = new RoundTrips();
    const opened = await Promise.allSettled(
      Array.from({ length: size }, () => ZkConnection.open({ ...options, roundTrips })),
    );
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    const members = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    if (failed) {
      await Promise.all(members.map((m) => m.close()));
      throw size > 1 ? poolUnavailable(failed.reason, members.length, size) : failed.reason;
    }
    return new SessionPool(members, roundTrips);
  }

  /** The index of the member whose session `lockPath` (namespace applied) uses: sessionIndexOf. */
  indexOf(lockPath: string): number {
    return sessionIndexOf(lockPath, this.members.length);
  }

  /** The member whose session `lockPath` uses. */
  connectionOf(lockPath: string): ZkConnection {
    return this.members[this.indexOf(lockPath)];
  }

  /** Every member's current session and state, in member order. */
  get sessions(): SessionInfo[] {
    return this.members.map((m, index) => ({ index, id: m.current.id, state: m.state }));
  }

  /** Why a member gave up for good (the servers refused our credentials), if one did. */
  get failure(): ZooKeeperAuthFailedError | undefined {
    return this.members.find((m) => m.failure)?.failure;
  }

  /** Closes every member; the client's state is CLOSED once all are. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.members.map((m) => m.close()));
    if (this.state !== 'CLOSED') {
      this.state = 'CLOSED';
      this.emit('state', 'CLOSED');
    }
    this.removeAllListeners();
  }

  private memberStates(): ConnectionState[] {
    return this.members.map((m) => m.state);
  }
}

/**
 * @internal
 * The client's state: the worst of its sessions' (LOST, then SUSPENDED); once all are up,
 * CONNECTED the first time and RECONNECTED after (`wasUp`), as Curator says of one session.
 */
export function clientState(states: readonly ConnectionState[], wasUp: boolean): ConnectionState {
  if (states.includes('LOST')) return 'LOST';
  if (states.includes('SUSPENDED')) return 'SUSPENDED';
  return wasUp ? 'RECONNECTED' : 'CONNECTED';
}

/**
 * The first connect of a pool failed. When some sessions connected, or the servers closed the
 * connections themselves, the error says how many connected and names maxClientCnxns (`size`
 * sessions are `size` connections); any other reason reads as one session's.
 */
function poolUnavailable(err: unknown, connected: number, size: number): unknown {
  if (!(err instanceof ZooKeeperUnavailableError)) return err;
  if (connected === 0 && !closedByServer(err.failure)) return err;
  const limit =
    `with sessions: ${size}, each instance opens ${size} connections, and a server refuses a ` +
    "client IP address's connections beyond its maxClientCnxns (60 by default): lower the " +
    'sessions option or raise maxClientCnxns on the servers';
  return new ZooKeeperUnavailableError(
    err.connectionString,
    err.timeoutMs,
    `${size - connected} of this client's ${size} session requests`,
    {
      reason: err.failure?.reason ?? `${connected} of the ${size} sessions connected`,
      hint: `${err.failure?.hint ?? 'Check that the servers are running and reachable, or raise connectTimeoutMs'}; ${limit}`,
      cause: err.failure?.cause ?? err,
    },
  );
}

/** No reason known, or the server ended the connection itself (reset, or closed at once). */
function closedByServer(failure: ConnectFailure | undefined): boolean {
  const code = (failure?.cause as { code?: unknown } | undefined)?.code;
  return failure === undefined || code === 'ECONNRESET' || code === 'EPIPE';
}

/** The children a semaphore keeps under its path (Curator InterProcessSemaphoreV2's layout). */
const SEMAPHORE_CHILDREN = ['/locks', '/leases'];

/**
 * @internal
 * The path whose locks share one session: the lock path, except a semaphore's `<path>/locks` and
 * `<path>/leases`, which go with `<path>` (docs/design.md "Sessions as a pool").
 */
export function recipePathOf(lockPath: string): string {
  for (const child of SEMAPHORE_CHILDREN) {
    if (lockPath.endsWith(child) && lockPath.length > child.length) {
      return lockPath.slice(0, -child.length);
    }
  }
  return lockPath;
}

/**
 * @internal
 * The index of the session `lockPath` uses: FNV-1a of its recipe path's UTF-8 bytes, the same in
 * every process and release. An ASCII path is hashed as it is; any other is encoded first.
 */
export function sessionIndexOf(lockPath: string, sessions: number): number {
  if (sessions <= 1) return 0;
  const path = recipePathOf(lockPath);
  let hash = FNV_OFFSET;
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (code > 0x7f) return fnv1a(Buffer.from(path, 'utf8')) % sessions;
    hash = Math.imul(hash ^ code, FNV_PRIME);
  }
  return (hash >>> 0) % sessions;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnv1a(bytes: Uint8Array): number {
  let hash = FNV_OFFSET;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, FNV_PRIME);
  return hash >>> 0;
}
