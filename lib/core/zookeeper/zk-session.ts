/** Owns one ZooKeeper session's API: requests, watches, liveness and state, composed. */
import { EventEmitter } from 'node:events';
import type { ConnectFailure } from '../errors';
import { ZooKeeperAuthFailedError } from '../errors';
import { Stat, Watcher, connectionTarget } from './zk-client';
import { ZkCredentials } from './zk-credentials';
import { ConnectFailures, describeTlsFailure, refusedForGood } from './connect-failures';
import { SessionClock } from './session-clock';
import { Listing, SessionRequests } from './session-requests';
import type { AclEntry } from './jute-requests';
import { DataWatches } from './data-watches';
import { LossReason, SessionLifecycle, SessionState } from './session-lifecycle';
import { untilConnected, untilUsable } from './session-waits';
import { ZkCode, ZkRequestError } from './zk-errors';
import { ZkWire } from './zk-wire';
import type { RoundTrips } from './round-trips';

export type { SessionState } from './session-lifecycle';
export type { Listing } from './session-requests';

export interface ZkSessionOptions {
  connectionString: string;
  sessionTimeoutMs: number;
  requestTimeoutMs: number;
  /** `auth` (sent on every connection), `acl` (of every node created) and `tls`. */
  credentials?: ZkCredentials;
  /** @internal The xid of the session's first request (ZkLockClientOptions.firstXid). */
  firstXid?: number;
  /** @internal The client's round-trip estimate, fed by this session's replies. */
  roundTrips?: RoundTrips;
  /**
   * The client's namespace: lock paths hang below it, and it is never created as a lock path
   * (ensureLockPath), so nothing of the library removes it.
   */
  namespace?: string;
}

/** How a holder's loss reads when the servers refused our credentials (see authFailure). */
const AUTH_REFUSED =
  "the servers refused this client's `auth` credentials (AUTH_FAILED) and closed the session; " +
  'fix them and connect a new client';

/**
 * One ZooKeeper session over our own wire (ZkWire), with promises, request timeouts, and our own
 * liveness clock (see SessionClock). Events: 'connected', 'suspended', 'reconnected', 'lost'
 * (reason: 'session-expired' | 'connection-lost'), 'closed'.
 * A lost session is never revived: the owner creates a new ZkSession.
 * Its parts (docs/design.md "The connection layer"): ZkWire (sockets, frames, pings,
 * reconnects), SessionLifecycle (the state machine and the one way it ends), SessionRequests,
 * DataWatches, SessionClock, ConnectFailures, session-waits.ts. This class reads the wire's
 * events into them: the session id, credentials confirmed, loss, the probe after a stall.
 */
export class ZkSession extends EventEmitter {
  private readonly wire: ZkWire;
  private readonly lifecycle: SessionLifecycle;
  private readonly requests: SessionRequests;
  private readonly watches = new DataWatches();
  private readonly clock: SessionClock;
  private readonly failures: ConnectFailures;
  private readonly credentials: ZkCredentials;
  private readonly withAuth: boolean;
  private sessionId = '';
  private stalled = false;
  private refusedAuth?: ZooKeeperAuthFailedError;
  private probing = false;

  constructor(private readonly options: ZkSessionOptions) {
    super();
    this.setMaxListeners(0);
    const credentials = options.credentials ?? ZkCredentials.none;
    this.credentials = credentials;
    this.withAuth = credentials.authCount > 0;
    const target = connectionTarget(options.connectionString);
    this.failures = new ConnectFailures(() => target.servers.length);
    this.wire = new ZkWire({
      target,
      sessionTimeoutMs: options.sessionTimeoutMs,
      credentials,
      handlers: {
        connected: (id) => this.wireConnected(id),
        disconnected: () => {
          if (!this.lifecycle.live) return;
          this.clock.disconnected();
          this.lifecycle.disconnected();
        },
        expired: () => this.markLost('session-expired'),
        authFailed: () => {
          this.refusedAuth = new ZooKeeperAuthFailedError(options.connectionString, 'digest');
          this.markLost('connection-lost');
        },
        answered: () => this.clock.heard(),
        socketFailed: (err, server, secured) => {
          if (!credentials.usesTls) return this.failures.socketFailed(err);
          const failure = describeTlsFailure(err, server, secured);
          const at = `${server.host}:${server.port}`;
          if (this.failures.tlsFailed(failure, at, refusedForGood(err as { code?: string })))
            this.emit('refused');
        },
        mayConnect: () => {
          if (!this.lifecycle.mayConnect()) return false;
          this.clock.attempting();
          return true;
        },
        ended: () => this.lifecycle.socketClosedForGood(),
      },
    });
    this.requests = new SessionRequests({
      timeoutMs: options.requestTimeoutMs,
      wire: this.wire,
      chroot: target.chroot,
      acl: credentials.aclList as AclEntry[],
      gone: (op, path) => this.goneError(op, path),
      authFailure: () => this.refusedAuth,
      roundTrips: options.roundTrips,
    });
    this.clock = new SessionClock(options.sessionTimeoutMs, {
      onSilent: () => this.wire.dropSocket(),
      onStuckConnecting: () => this.wire.dropSocket(),
      onExpiredByClock: () => this.markLost('connection-lost'),
      onStall: () => process.nextTick(() => this.probe()),
      onQuiet: () => this.probe(),
    });
    this.lifecycle = new SessionLifecycle({
      emit: (event: string, ...args: unknown[]) => this.emit(event, ...args),
      socketConnected: () => this.wire.connected,
      refuseRequests: () => this.requests.refuseAll(),
      closeOnServer: () => this.wire.closeSession(),
      release: () => {
        this.clock.stop();
        this.requests.idle();
        this.watches.clear();
        this.wire.end();
      },
      forget: () => this.removeAllListeners(),
    });
    if (options.firstXid !== undefined) this.wire.startXidsAt(options.firstXid);
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
  lossDetail(reason: LossReason, nodes: string): string {
    if (this.refusedAuth) return AUTH_REFUSED;
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
    this.wire.start();
  }

  /**
   * A server answers again (the owner's next session connected): a lost session still trying
   * to close itself on the server gets its grace from now (SessionLifecycle.lose).
   */
  serverReachable(): void {
    this.lifecycle.reachable();
  }

  /** Resolves once connected again: true, or false if the session is lost or closed first. */
  whenUsable(): Promise<boolean> {
    if (this.state === 'connected') return Promise.resolve(true);
    if (!this.alive) return Promise.resolve(false);
    return untilUsable(this);
  }

  /**
   * Resolves once connected; rejects when `timeoutMs` passes, the session ends first, or every
   * server refused the TLS handshake (refusedEverywhere).
   */
  waitConnected(timeoutMs: number): Promise<void> {
    if (this.state === 'connected') return Promise.resolve();
    const gone = (): Error => this.goneError('connect', '/');
    if (!this.alive || this.refusedEverywhere) return Promise.reject(gone());
    return untilConnected(this, timeoutMs, gone);
  }

  create(path: string, data: Buffer | null, mode: number): Promise<string> {
    return this.requests.create(path, data, mode);
  }

  /** The namespace of the client this session serves (ZkSessionOptions.namespace). */
  get namespace(): string | undefined {
    return this.options.namespace;
  }

  /** Whether the nodes a lock relies on must carry our ACL (see ZkCredentials.checkAcl). */
  get checksAcl(): boolean {
    return this.credentials.checksAcl;
  }

  /** The ACL of `path`, as the server stores it. */
  getAcl(path: string): Promise<AclEntry[]> {
    return this.requests.getAcl(path);
  }

  /** Throws UnexpectedAclError when `found`, the ACL of `path`, lets other identities in. */
  checkAcl(path: string, found: readonly AclEntry[]): void {
    this.credentials.checkAcl(path, found);
  }

  /** Writes `data` to `path` if the node is still at `version` (BAD_VERSION otherwise). */
  setData(path: string, data: Buffer, version: number): Promise<void> {
    return this.requests.setData(path, data, version).then(() => undefined);
  }

  /** Deletes `path`; with a `version`, only if the node is still at that version. */
  remove(path: string, version = -1): Promise<void> {
    return this.requests.remove(path, version);
  }

  getChildren(path: string, watcher?: Watcher): Promise<Listing> {
    return this.requests.getChildren(path, watcher);
  }

  /**
   * Data and stat of a node; NO_NODE rejects (and leaves no watch behind, unlike exists). A
   * watcher joins the one data watch this session keeps per path (DataWatches); `unwatchData`
   * drops one that is not needed.
   */
  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer | null; stat: Stat }> {
    const dispatcher = watcher ? this.watches.join(path, watcher) : undefined;
    const reply = this.requests.getData(path, dispatcher);
    // No watch is set when the request fails: the next watcher must register again.
    if (dispatcher) reply.catch(() => this.watches.notSet(path, dispatcher));
    return reply;
  }

  /** Drops a watcher given to getData (its waiter gave up); the path's one watch stays. */
  unwatchData(path: string, watcher: Watcher): void {
    this.watches.leave(path, watcher);
  }

  /** Hex session id of an ephemeral node's owner ('0' for a persistent node). */
  static ownerOf(stat: Stat): string {
    return stat.ephemeralOwner.readBigUInt64BE(0).toString(16);
  }

  /**
   * Closes the session (deleting its ephemeral nodes) and resolves when it has ended: within
   * `graceMs` when the server must answer, at once when no connection is up (SessionLifecycle).
   */
  close(graceMs = this.options.requestTimeoutMs): Promise<void> {
    return this.lifecycle.close(graceMs);
  }

  /** The error for a request or wait the session no longer takes (lost, closing or closed). */
  private goneError(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.SESSION_GONE,
      op,
      path,
      `ZooKeeper ${op} "${path}": session ${this.sessionId || '(none)'} is ${this.lifecycle.state}`,
    );
  }

  private markLost(reason: LossReason): void {
    if (this.lifecycle.over) return;
    this.stalled = this.clock.stale;
    // The server may still hold this session (the whole ensemble was paused, or restarts and
    // restores it from its log): it closes itself when possible so its ephemeral nodes go at
    // once. A session our clock ended keeps trying until a server answers again, then gets
    // another session timeout; one the server expired, or whose credentials it refused, only
    // that timeout.
    const untilReachable = reason === 'connection-lost' && !this.refusedAuth;
    this.lifecycle.lose(reason, this.options.sessionTimeoutMs, untilReachable);
  }

  /**
   * A connection's handshake completed. A lost session closes itself on the server now; a new
   * session with `auth` is 'connected' only once the servers accepted the credentials: they
   * answer our AUTH packets (written right behind the ConnectRequest) before any later request,
   * so an answered exists('/') means they were accepted (on AUTH_FAILED the server closes the
   * connection first). A dropped connection meanwhile connects again and asks again.
   */
  private wireConnected(id: string): void {
    if (this.lifecycle.over) return this.lifecycle.socketConnected();
    const first = this.lifecycle.phase === 'connecting';
    this.sessionId = id;
    this.clock.heard();
    if (!this.clock.connected(this.wire.negotiatedTimeoutMs))
      return this.markLost('session-expired');
    if (this.clock.stale) this.probe(); // a handshake answered after a stall
    this.failures.connected();
    if (!first || !this.withAuth) return this.lifecycle.connected();
    void this.requests.probe().then((answered) => {
      if (answered && this.lifecycle.phase === 'connecting' && this.wire.connected) {
        this.lifecycle.connected();
      }
    });
  }

  /** After a stall or a quiet spell: a request sent now whose reply proves the session alive. */
  private probe(): void {
    if (this.probing || !this.lifecycle.live) return;
    this.probing = true;
    const sentAt = Date.now();
    void this.requests.probe().then((answered) => {
      this.probing = false;
      if (!answered) return;
      this.clock.confirmed(sentAt);
      // Another stall while it was under way: that one needs a request sent after it.
      if (this.clock.stale) this.probe();
    });
  }
}
