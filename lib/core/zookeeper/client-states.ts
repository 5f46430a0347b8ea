/** Owns what node-zookeeper-client's states mean for one session: its id, auth, loss and probe. */
import { ZooKeeperAuthFailedError } from '../errors';
import type * as zookeeper from './zk-client';
import { ZkCode, ZkRequestError } from './zk-errors';
import type { ConnectFailures } from './connect-failures';
import type { SessionClock } from './session-clock';
import type { LossReason, SessionLifecycle } from './session-lifecycle';

/** How a holder's loss reads when the servers refused our credentials (see authFailure). */
const AUTH_REFUSED =
  "the servers refused this client's `auth` credentials (AUTH_FAILED) and closed the session; " +
  'fix them and connect a new client';

/** The parts of the session the client's states are applied to. */
export interface ClientStatesOptions {
  client: zookeeper.Client;
  lifecycle: SessionLifecycle;
  clock: SessionClock;
  failures: ConnectFailures;
  /** `auth` credentials are sent: a new session is 'connected' once the servers accepted them. */
  withAuth: boolean;
  connectionString: string;
  sessionTimeoutMs: number;
}

/**
 * Reads the client's 'state' events into the session's lifecycle and clock, and sends the
 * exists('/') requests whose answers confirm a session: its credentials accepted, or (after a
 * stall) the session still alive (SessionClock).
 */
export class ClientStates {
  private sessionId = '';
  private stalled = false;
  private refusedAuth?: ZooKeeperAuthFailedError;
  private probing = false;

  constructor(private readonly parts: ClientStatesOptions) {
    parts.client.on('state', (s: { name: string }) => this.changed(s.name));
  }

  /** Hex session id, known once connected. */
  get id(): string {
    return this.sessionId;
  }

  /** Lost because this process stalled (paused, blocked) past the timeout, not ZooKeeper. */
  get lostToStall(): boolean {
    return this.stalled;
  }

  /** The servers answered AUTH_FAILED: the session is lost, and a new one would fail the same way. */
  get authFailure(): ZooKeeperAuthFailedError | undefined {
    return this.refusedAuth;
  }

  /** Why `nodes` (e.g. "the lock node") of this lost session are gone, for LockLostError. */
  lossDetail(reason: LossReason, nodes: string): string {
    if (this.refusedAuth) return AUTH_REFUSED;
    return reason === 'session-expired'
      ? `the ZooKeeper session expired, so the server deleted ${nodes}`
      : 'ZooKeeper was unreachable for longer than the session timeout';
  }

  /** The error for a request or wait the session no longer takes (lost, closing or closed). */
  goneError(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.SESSION_GONE,
      op,
      path,
      `ZooKeeper ${op} "${path}": session ${this.sessionId || '(none)'} is ` +
        this.parts.lifecycle.state,
    );
  }

  markLost(reason: LossReason): void {
    const { lifecycle, clock, sessionTimeoutMs } = this.parts;
    if (lifecycle.over) return;
    this.stalled = clock.stale;
    // The server may still hold this session (the whole ensemble was paused, or restarts and
    // restores it from its log): it closes itself when possible so its ephemeral nodes go at
    // once. A session our clock ended keeps trying until a server answers again, then gets
    // another session timeout; one the server expired, or whose credentials it refused, only
    // that timeout.
    const untilReachable = reason === 'connection-lost' && !this.refusedAuth;
    lifecycle.lose(reason, sessionTimeoutMs, untilReachable);
  }

  /** After a stall: a request sent now whose reply proves the session alive (SessionClock). */
  probe(): void {
    if (this.probing || !this.parts.lifecycle.live) return;
    this.probing = true;
    const sentAt = Date.now();
    this.parts.client.exists('/', undefined, (err) => {
      this.probing = false;
      if (!err) this.parts.clock.confirmed(sentAt);
      // Another stall while it was under way: that one needs a request sent after it.
      if (!err && this.parts.clock.stale) this.probe();
    });
  }

  private changed(name: string): void {
    const { client, lifecycle, clock, failures } = this.parts;
    if (lifecycle.over) return;
    if (name === 'SYNC_CONNECTED') {
      const first = lifecycle.phase === 'connecting';
      this.sessionId = client.getSessionId().toString('hex').replace(/^0+/, '') || '0';
      clock.heard();
      if (!clock.connected(client.getSessionTimeout())) return this.markLost('session-expired');
      if (clock.stale) this.probe(); // a handshake answered after a stall
      failures.connected();
      if (first && this.parts.withAuth) return this.confirmAuth();
      lifecycle.connected();
    } else if (name === 'DISCONNECTED' && lifecycle.live) {
      clock.disconnected();
      lifecycle.disconnected();
    } else if (name === 'EXPIRED') {
      this.markLost('session-expired');
    } else if (name === 'AUTH_FAILED') {
      this.refusedAuth = new ZooKeeperAuthFailedError(this.parts.connectionString, 'digest');
      this.markLost('connection-lost');
    }
  }

  /**
   * A new session with `auth`: 'connected' only once the servers accepted the credentials. They
   * answer our AUTH requests (sent right behind the ConnectRequest) before any later request, so
   * an answered exists('/') means they were accepted; on AUTH_FAILED the server closes the
   * connection and the client's AUTH_FAILED state ends the session instead (see changed).
   * A dropped connection meanwhile connects again and asks again.
   */
  private confirmAuth(): void {
    const { client, lifecycle } = this.parts;
    client.exists('/', undefined, (err) => {
      if (err || lifecycle.phase !== 'connecting') return;
      if (client.getState().name !== 'SYNC_CONNECTED') return;
      lifecycle.connected();
    });
  }
}
