import { EventEmitter } from 'node:events';
import type { ConnectionState } from '../types';
import { ZooKeeperUnavailableError } from '../errors';
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

  private constructor(private readonly options: ZkConnectionOptions) {
    super();
    this.setMaxListeners(0);
    this.session = this.newSession();
  }

  /** Connects the first session; ZooKeeperUnavailableError if none within connectTimeoutMs. */
  static async open(options: ZkConnectionOptions): Promise<ZkConnection> {
    const connection = new ZkConnection(options);
    try {
      await connection.session.waitConnected(options.connectTimeoutMs);
    } catch {
      await connection.close();
      throw new ZooKeeperUnavailableError(
        options.connectionString,
        options.connectTimeoutMs,
        'a session request',
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
    await session.waitConnected(timeoutMs).catch(() => {
      if (this.session !== session && !this.closed) return; // replaced meanwhile: retry below
      throw new ZooKeeperUnavailableError(
        this.options.connectionString,
        timeoutMs,
        'a session request',
      );
    });
    if (this.session !== session) return this.ready(timeoutMs);
    return session;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.session.close();
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
    });
    session.on('suspended', () => this.setState('SUSPENDED'));
    session.on('reconnected', () => this.setState('RECONNECTED'));
    session.on('lost', (reason: 'session-expired' | 'connection-lost') => {
      if (this.closed) return;
      this.setState('LOST');
      this.afterStall = session.lostToStall;
      this.emit('session-lost', session, reason);
      this.session = this.newSession();
      this.emit('session', this.session);
    });
    session.start();
    return session;
  }

  private setState(state: ConnectionState): void {
    if (this.state === state) return;
    this.state = state;
    this.emit('state', state);
  }
}
