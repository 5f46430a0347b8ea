/** Owns one ZooKeeper session's API: requests, watches, liveness and state, composed. */
import { EventEmitter } from 'node:events';
import * as zookeeper from './zk-client';
import type { ConnectFailure, ZooKeeperAuthFailedError } from '../errors';
import { ZkCredentials } from './zk-credentials';
import { ConnectFailures } from './connect-failures';
import { SessionClock } from './session-clock';
import { Listing, SessionRequests } from './session-requests';
import type { RoundTrips } from './round-trips';
import type { AclEntry } from './jute-requests';
import { DataWatches } from './data-watches';
import { LossReason, SessionLifecycle, SessionState } from './session-lifecycle';
import { ClientStates } from './client-states';
import { untilConnected, untilUsable } from './session-waits';
import { hookConnection } from './connection-hooks';
import {
  assertSupportedClient,
  dropSocket,
  endConnectionManager,
  isConnected,
  startXidsAt,
} from './nzc-patch';

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
  /**
   * The client's namespace: lock paths hang below it, and it is never created as a lock path
   * (ensureLockPath), so nothing of the library removes it.
   */
  namespace?: string;
  /** @internal The client's round-trip estimate, fed by this session's replies. */
  roundTrips?: RoundTrips;
}

/**
 * One ZooKeeper session over one node-zookeeper-client Client, with promises, request timeouts,
 * and our own liveness clock (see SessionClock). Events: 'connected', 'suspended', 'reconnected',
 * 'lost' (reason: 'session-expired' | 'connection-lost'), 'closed'.
 * A lost session is never revived: the owner creates a new ZkSession.
 * Its parts (docs/design.md "The connection layer"): SessionLifecycle (state and the one way it
 * ends), ClientStates (what the client's states mean), SessionRequests, DataWatches,
 * SessionClock, ConnectFailures, session-waits.ts, and connection-hooks.ts over nzc-patch.ts
 * (the hooks into node-zookeeper-client).
 */
export class ZkSession extends EventEmitter {
  private readonly client: zookeeper.Client;
  private readonly lifecycle: SessionLifecycle;
  private readonly requests: SessionRequests;
  private readonly watches = new DataWatches();
  private readonly clock: SessionClock;
  private readonly failures: ConnectFailures;
  private readonly states: ClientStates;
  private readonly credentials: ZkCredentials;

  constructor(private readonly options: ZkSessionOptions) {
    super();
    assertSupportedClient(); // before the client is used at all: an upgrade fails here, loudly
    this.setMaxListeners(0);
    const credentials = options.credentials ?? ZkCredentials.none;
    this.credentials = credentials;
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
      acl: credentials.aclList as AclEntry[],
      gone: (op, path) => this.states.goneError(op, path),
      authFailure: () => this.states.authFailure,
      roundTrips: options.roundTrips,
    });
    this.clock = new SessionClock(options.sessionTimeoutMs, {
      onSilent: () => dropSocket(cm),
      onStuckConnecting: () => dropSocket(cm),
      onExpiredByClock: () => this.states.markLost('connection-lost'),
      onStall: () => process.nextTick(() => this.states.probe()),
      onQuiet: () => this.states.probe(),
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
    hookConnection(cm, {
      credentials,
      failures: this.failures,
      clock: this.clock,
      lifecycle: this.lifecycle,
      requests: this.requests,
      refusedEverywhere: () => this.emit('refused'),
    });
    if (options.firstXid !== undefined) startXidsAt(cm, options.firstXid);
    this.states = new ClientStates({
      client,
      lifecycle: this.lifecycle,
      clock: this.clock,
      failures: this.failures,
      withAuth: credentials.authCount > 0,
      connectionString: options.connectionString,
      sessionTimeoutMs: options.sessionTimeoutMs,
    });
  }

  /** Hex session id, known once connected. */
  get id(): string {
    return this.states.id;
  }

  /** Lost because this process stalled (paused, blocked) past the timeout, not ZooKeeper. */
  get lostToStall(): boolean {
    return this.states.lostToStall;
  }

  /** The servers answered AUTH_FAILED: the session is lost, and a new one would fail the same way. */
  get authFailure(): ZooKeeperAuthFailedError | undefined {
    return this.states.authFailure;
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
    return this.states.lossDetail(reason, nodes);
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
    const gone = (): Error => this.states.goneError('connect', '/');
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

  /**
   * Closes the session (deleting its ephemeral nodes) and resolves when it has ended: within
   * `graceMs` when the server must answer, at once when no connection is up (SessionLifecycle).
   */
  close(graceMs = this.options.requestTimeoutMs): Promise<void> {
    return this.lifecycle.close(graceMs);
  }
}
