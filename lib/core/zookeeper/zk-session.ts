/** Owns one ZooKeeper session's API: requests, watches, liveness and state, composed. */
import { EventEmitter } from 'node:events';
import { connect as tlsConnect } from 'node:tls';
import * as zookeeper from './zk-client';
import type { ConnectFailure } from '../errors';
import { ZooKeeperAuthFailedError } from '../errors';
import { ZkCode, ZkRequestError } from './zk-errors';
import { ZkCredentials } from './zk-credentials';
import { useTlsSockets } from './tls-connect';
import { ConnectFailures } from './connect-failures';
import { SessionClock } from './session-clock';
import { Listing, SessionRequests } from './session-requests';
import { DataWatches } from './data-watches';
import { LossReason, SessionLifecycle, SessionState } from './session-lifecycle';
import {
  assertSupportedClient,
  dropSocket,
  endConnectionManager,
  isConnected,
  patchConnectionManager,
} from './nzc-patch';

export type { SessionState } from './session-lifecycle';
export type { Listing } from './session-requests';

/** How a holder's loss reads when the servers refused our credentials (see authFailure). */
const AUTH_REFUSED =
  "the servers refused this client's `auth` credentials (AUTH_FAILED) and closed the session; " +
  'fix them and connect a new client';

export interface ZkSessionOptions {
  connectionString: string;
  sessionTimeoutMs: number;
  requestTimeoutMs: number;
  /** `auth` (sent on every connection), `acl` (of every node created) and `tls`. */
  credentials?: ZkCredentials;
}

/**
 * One ZooKeeper session over one node-zookeeper-client Client, with promises, request timeouts,
 * and our own liveness clock (see SessionClock). Events: 'connected', 'suspended', 'reconnected',
 * 'lost' (reason: 'session-expired' | 'connection-lost'), 'closed'.
 * A lost session is never revived: the owner creates a new ZkSession.
 * Its parts (docs/design.md "The connection layer"): SessionLifecycle (state and the one way it
 * ends), SessionRequests, DataWatches, SessionClock, ConnectFailures, and nzc-patch.ts (the
 * hooks into node-zookeeper-client).
 */
export class ZkSession extends EventEmitter {
  /** Hex session id, known once connected. */
  id = '';
  /** Lost because this process stalled (paused, blocked) past the timeout, not ZooKeeper. */
  lostToStall = false;
  /** The servers answered AUTH_FAILED: the session is lost, and a new one would fail the same way. */
  authFailure?: ZooKeeperAuthFailedError;
  private readonly client: zookeeper.Client;
  private readonly credentials: ZkCredentials;
  private readonly lifecycle: SessionLifecycle;
  private readonly requests: SessionRequests;
  private readonly watches = new DataWatches();
  private readonly clock: SessionClock;
  private readonly failures: ConnectFailures;
  private probing = false;

  constructor(private readonly options: ZkSessionOptions) {
    super();
    assertSupportedClient(); // before the client is used at all: an upgrade fails here, loudly
    this.setMaxListeners(0);
    this.credentials = options.credentials ?? ZkCredentials.none;
    const client = zookeeper.createClient(options.connectionString, {
      sessionTimeout: options.sessionTimeoutMs,
      spinDelay: 200,
      retries: 0,
    });
    this.client = client;
    const cm = client.connectionManager;
    this.failures = new ConnectFailures(() => cm.servers.length);
    this.requests = new SessionRequests({
      timeoutMs: options.requestTimeoutMs,
      client,
      acl: this.credentials.aclList,
      gone: (op, path) => this.goneError(op, path),
      authFailure: () => this.authFailure,
    });
    this.clock = new SessionClock(options.sessionTimeoutMs, {
      onSilent: () => dropSocket(cm),
      onStuckConnecting: () => dropSocket(cm),
      onExpiredByClock: () => this.markLost('connection-lost'),
      onStall: () => process.nextTick(() => this.probe()),
      onQuiet: () => this.probe(),
    });
    this.lifecycle = new SessionLifecycle({
      emit: (event: string, ...args: unknown[]) => this.emit(event, ...args),
      socketConnected: () => isConnected(cm),
      refuseRequests: () => this.requests.refuseAll(),
      closeOnServer: () => client.close(),
      release: () => {
        this.clock.stop();
        this.requests.idle();
        this.watches.clear();
        endConnectionManager(cm);
      },
      forget: () => {
        this.removeAllListeners();
        client.removeAllListeners();
      },
    });
    if (this.credentials.usesTls) {
      useTlsSockets(
        cm,
        (server) =>
          tlsConnect(this.credentials.tlsOptions({ ...server, port: Number(server.port) })),
        (failure, server, forGood) =>
          this.tlsFailed(failure, `${server.host}:${server.port}`, forGood),
      );
    }
    patchConnectionManager(cm, {
      primeConnection: () => this.credentials.authPackets(),
      socketFailed: (err) => {
        // A TLS connection's failure is described by tls-connect.ts instead.
        if (!this.credentials.usesTls) this.failures.socketFailed(err);
      },
      answered: () => this.clock.heard(),
      undecodable: (frames) => this.requests.noteUndecodable(frames),
      mayConnect: () => {
        if (!this.lifecycle.mayConnect()) return false;
        this.clock.attempting();
        return true;
      },
      mayOpenSocket: () => !this.lifecycle.ended,
      socketConnected: () => this.lifecycle.socketConnected(),
      socketClosedForGood: () => this.lifecycle.socketClosedForGood(),
    });
    client.on('state', (s: { name: string }) => this.onClientState(s.name));
  }

  get state(): SessionState {
    return this.lifecycle.state;
  }

  get connectionString(): string {
    return this.options.connectionString;
  }

  get alive(): boolean {
    return this.lifecycle.alive;
  }

  /** Why the last connection attempt failed (TLS or plain), until a session is connected. */
  get lastFailure(): ConnectFailure | undefined {
    return this.failures.last;
  }

  /** Every server refused the TLS handshake on a certificate check (see ConnectFailures). */
  get refusedEverywhere(): boolean {
    return this.failures.refusedEverywhere;
  }

  /** Why `nodes` (e.g. "the lock node") of this lost session are gone, for LockLostError. */
  lossDetail(reason: 'session-expired' | 'connection-lost', nodes: string): string {
    if (this.authFailure) return AUTH_REFUSED;
    return reason === 'session-expired'
      ? `the ZooKeeper session expired, so the server deleted ${nodes}`
      : 'ZooKeeper was unreachable for longer than the session timeout';
  }

  /**
   * Connected and heard from within the safe window (2/3 of the session timeout): only then may
   * a lock be granted or handed on. Otherwise the clock's rules are applied right after this
   * call, so a session silent for too long (a process that just woke up) is dropped or declared
   * lost before the next timer of the caller runs.
   */
  get provenAlive(): boolean {
    if (this.state !== 'connected') return false;
    if (this.clock.withinSafeWindow()) return true;
    process.nextTick(() => this.checkLiveness());
    return false;
  }

  /** Heard from within the safe window, connected or not (a holder may still trust its lock). */
  get heardRecently(): boolean {
    return this.clock.withinSafeWindow();
  }

  get silenceMs(): number {
    return this.clock.silenceMs();
  }

  get safeWindowMs(): number {
    return this.clock.safeWindowMs;
  }

  /** Applies the liveness rules now (synchronously): may mark the session lost at once. */
  checkLiveness(): void {
    if (this.alive && !this.lifecycle.ended) this.clock.tick(Date.now());
  }

  start(): void {
    this.clock.start();
    this.client.connect();
  }

  /** Resolves once connected again: true, or false if the session is lost or closed first. */
  whenUsable(): Promise<boolean> {
    if (this.state === 'connected') return Promise.resolve(true);
    if (!this.alive) return Promise.resolve(false);
    return new Promise((resolve) => {
      const ok = (): void => done(true);
      const gone = (): void => done(false);
      const done = (value: boolean): void => {
        this.off('reconnected', ok).off('connected', ok).off('lost', gone).off('closed', gone);
        resolve(value);
      };
      this.on('reconnected', ok).on('connected', ok).on('lost', gone).on('closed', gone);
    });
  }

  /**
   * Resolves once connected; rejects when `timeoutMs` passes, the session ends first, or every
   * server refused the TLS handshake (refusedEverywhere).
   */
  waitConnected(timeoutMs: number): Promise<void> {
    if (this.state === 'connected') return Promise.resolve();
    if (!this.alive || this.refusedEverywhere)
      return Promise.reject(this.goneError('connect', '/'));
    return new Promise((resolve, reject) => {
      const done = (err?: Error): void => {
        clearTimeout(timer);
        this.off('connected', onOk)
          .off('reconnected', onOk)
          .off('lost', onGone)
          .off('closed', onGone)
          .off('refused', onGone);
        if (err) reject(err);
        else resolve();
      };
      const onOk = (): void => done();
      const onGone = (): void => done(this.goneError('connect', '/'));
      const timer = setTimeout(
        () =>
          done(
            new ZkRequestError(
              ZkCode.REQUEST_TIMEOUT,
              'connect',
              '/',
              `no session within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
      this.on('connected', onOk).on('reconnected', onOk).on('lost', onGone).on('closed', onGone);
      this.on('refused', onGone);
    });
  }

  // ---- requests -------------------------------------------------------------------------

  create(path: string, data: Buffer | null, mode: number): Promise<string> {
    return this.requests.create(path, data, mode);
  }

  /** Writes `data` to `path` if the node is still at `version` (BAD_VERSION otherwise). */
  setData(path: string, data: Buffer, version: number): Promise<void> {
    return this.requests.setData(path, data, version);
  }

  /** Deletes `path`; with a `version`, only if the node is still at that version. */
  remove(path: string, version = -1): Promise<void> {
    return this.requests.remove(path, version);
  }

  getChildren(path: string, watcher?: zookeeper.Watcher): Promise<Listing> {
    return this.requests.getChildren(path, watcher);
  }

  /**
   * Data and stat of a node; NO_NODE rejects (and leaves no watch behind, unlike exists). A
   * watcher joins the one data watch this session keeps per path (DataWatches); `unwatchData`
   * drops one that is not needed.
   */
  getData(
    path: string,
    watcher?: zookeeper.Watcher,
  ): Promise<{ data: Buffer | null; stat: zookeeper.Stat }> {
    const dispatcher = watcher ? this.watches.join(path, watcher) : undefined;
    const reply = this.requests.getData(path, dispatcher);
    // No watch is set when the request fails: the next watcher must register again.
    if (dispatcher) reply.catch(() => this.watches.notSet(path, dispatcher));
    return reply;
  }

  /** Drops a watcher given to getData (its waiter gave up); the path's one watch stays. */
  unwatchData(path: string, watcher: zookeeper.Watcher): void {
    this.watches.leave(path, watcher);
  }

  /** Hex session id of an ephemeral node's owner ('0' for a persistent node). */
  static ownerOf(stat: zookeeper.Stat): string {
    return stat.ephemeralOwner.readBigUInt64BE(0).toString(16);
  }

  // ---- state ----------------------------------------------------------------------------

  /**
   * Closes the session (deleting its ephemeral nodes) and resolves when it has ended: within
   * `graceMs` when the server must answer, at once when no connection is up (SessionLifecycle).
   */
  close(graceMs = this.options.requestTimeoutMs): Promise<void> {
    return this.lifecycle.close(graceMs);
  }

  private goneError(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.SESSION_GONE,
      op,
      path,
      `ZooKeeper ${op} "${path}": session ${this.id || '(none)'} is ${this.state}`,
    );
  }

  /** A TLS attempt failed; a certificate check failing on every server ends waits at once. */
  private tlsFailed(failure: ConnectFailure, server: string, forGood: boolean): void {
    if (this.failures.tlsFailed(failure, server, forGood)) this.emit('refused');
  }

  private onClientState(name: string): void {
    if (this.lifecycle.over) return;
    if (name === 'SYNC_CONNECTED') {
      const first = this.lifecycle.phase === 'connecting';
      this.id = this.client.getSessionId().toString('hex').replace(/^0+/, '') || '0';
      this.clock.heard();
      this.clock.connected(this.client.getSessionTimeout());
      if (this.clock.stale) this.probe(); // a handshake answered after a stall
      this.failures.connected();
      if (first && this.credentials.authCount > 0) return this.confirmAuth();
      this.lifecycle.connected();
    } else if (name === 'DISCONNECTED' && this.lifecycle.live) {
      this.clock.disconnected();
      this.lifecycle.disconnected();
    } else if (name === 'EXPIRED') {
      this.markLost('session-expired');
    } else if (name === 'AUTH_FAILED') {
      this.authFailure = new ZooKeeperAuthFailedError(this.options.connectionString, 'digest');
      this.markLost('connection-lost');
    }
  }

  /**
   * A new session with `auth`: 'connected' only once the servers accepted the credentials. They
   * answer our AUTH requests (sent right behind the ConnectRequest) before any later request, so
   * an answered exists('/') means they were accepted; on AUTH_FAILED the server closes the
   * connection and the client's AUTH_FAILED state ends the session instead (onClientState).
   * A dropped connection meanwhile connects again and asks again.
   */
  private confirmAuth(): void {
    this.client.exists('/', undefined, (err) => {
      if (err || this.lifecycle.phase !== 'connecting') return;
      if (this.client.getState().name !== 'SYNC_CONNECTED') return;
      this.lifecycle.connected();
    });
  }

  private markLost(reason: LossReason): void {
    if (this.lifecycle.over) return;
    this.lostToStall = this.clock.stale;
    // The server may still hold this session (e.g. the whole ensemble was paused): it closes
    // itself when possible so its ephemeral nodes go at once, within another session timeout.
    this.lifecycle.lose(reason, this.options.sessionTimeoutMs);
  }

  /** After a stall: a request sent now whose reply proves the session alive (SessionClock). */
  private probe(): void {
    if (this.probing || !this.lifecycle.live) return;
    this.probing = true;
    const sentAt = Date.now();
    this.client.exists('/', undefined, (err) => {
      this.probing = false;
      if (!err) this.clock.confirmed(sentAt);
      // Another stall while it was under way: that one needs a request sent after it.
      if (!err && this.clock.stale) this.probe();
    });
  }
}
