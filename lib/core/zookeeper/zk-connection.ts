/** Owns the client's connection: one live session at a time, replaced when lost, and its states. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import type { ConnectionState } from '../types';
import {
  InvalidLockOptionsError,
  ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
} from '../errors';
import { ZkSession, ZkSessionOptions } from './zk-session';

export interface ZkConnectionOptions extends ZkSessionOptions {
  connectTimeoutMs: number;
}

/**
 * The one way into ZooKeeper: keeps a live session, replacing it with a new one when it is
 * lost, and reports Curator-like states ('state' event). Also emits 'session-lost'
 * (session, reason) and 'session' (the new session) so holders bound to a session can react.
 */
export class ZkConnection extends EventEmitter {
  state: ConnectionState = 'LOST';
  private session: ZkSession;
  private closed = false;
  private hadSession = false;
  /** The current session replaces one lost because this process stalled, and is not up yet. */
  afterStall = false;
  /** Set when the servers refused our credentials: no new session is tried (it would fail too). */
  failure?: ZooKeeperAuthFailedError;
  /**
   * Runs a function in the async context this connection was opened in. A session is often
   * found lost inside a caller's `withLock` scope (its assertHeld() applies the clock): the new
   * session, its socket and timers, and the loss reported to listeners must not inherit that
   * scope, or a listener that takes a lock would see the scope's holds as its own
   * (docs/design.md "Ownership and batching inside one process").
   */
  private readonly detached = AsyncLocalStorage.snapshot();
  /** Lost sessions still closing themselves (see close()). */
  private readonly lostSessions = new Set<ZkSession>();

  private constructor(private readonly options: ZkConnectionOptions) {
    super();
    this.setMaxListeners(0);
    this.session = this.newSession();
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
      await connection.session.waitConnected(options.connectTimeoutMs);
    } catch {
      const session = connection.session;
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

  /** The current session (connected, suspended, or a new one still connecting). */
  get current(): ZkSession {
    return this.session;
  }

  /** The current session once it is connected. */
  async ready(timeoutMs = this.options.connectTimeoutMs): Promise<ZkSession> {
    const session = this.session;
    if (this.failure) throw this.failure;
    // Connected now (our state follows the current session's events): no need to ask it.
    if (!this.closed && (this.state === 'CONNECTED' || this.state === 'RECONNECTED')) {
      return session;
    }
    const startedAt = Date.now();
    await session.waitConnected(timeoutMs).catch(() => {
      if (this.failure) throw this.failure;
      if (this.session !== session && !this.closed) return; // replaced meanwhile: retry below
      throw this.unavailable(session, timeoutMs, startedAt);
    });
    if (this.session !== session) return this.ready(timeoutMs);
    return session;
  }

  /**
   * No session in time, with the reason when a TLS handshake failed. When every server refused
   * it on a certificate check, the wait ended early (it could not succeed): say so.
   */
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
    await Promise.all([this.session.close(), ...[...this.lostSessions].map((s) => s.close())]);
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
        this.session = this.newSession();
        this.emit('session', this.session);
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
