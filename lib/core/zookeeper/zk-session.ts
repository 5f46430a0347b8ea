/** Owns one ZooKeeper session: its state machine, liveness clock, requests, round trips, watches. */
import { AssertionError } from 'node:assert';
import { EventEmitter } from 'node:events';
import { parseConnectionString } from '../connection-string';
import { ZooKeeperAuthFailedError, InvalidLockOptionsError, type ConnectFailure } from '../errors';
import {
  type AclEntry,
  Stat,
  Watcher,
  type ConnectionTarget,
  type WatcherEvent,
} from './zk-client';
import { ZkCredentials } from './zk-credentials';
import { ConnectFailures, describeTlsFailure, refusedForGood } from './connect-failures';
import { ZkCode, ZkRequestError, requestError } from './zk-errors';
import { WireOptions, ZkWire } from './zk-wire';
import {
  MAX_REQUEST_BYTES,
  OP,
  TYPE_OFFSET,
  encodeCreate,
  encodeDelete,
  encodeGetAcl,
  encodeMulti,
  encodePathWatch,
  encodeSetData,
  type ReplyPayload,
} from './jute';

/** The state a session reports (ZkSession.state). */
export type SessionState = 'connecting' | 'connected' | 'suspended' | 'lost' | 'closed';

export type LossReason = 'session-expired' | 'connection-lost';

/** Where a session is (docs/design.md "The session's states"); `state` is what it reports. */
export type Phase =
  /** No session yet, or its credentials are not confirmed yet. */
  | 'connecting'
  | 'connected'
  /** The connection dropped; the server may still hold the session. */
  | 'suspended'
  /** The owner closed it: CLOSE_SESSION sent, waiting for the server to close the socket. */
  | 'closing'
  /** Over for us; still closing itself on the server in the background. */
  | 'lost'
  /** Ended after the owner's close: no socket, no timer. */
  | 'closed'
  /** Ended after a loss (still reported as lost). */
  | 'lost-closed';

/** Every phase a phase may move to (docs/design.md "The session's states"); no other move. */
export const TRANSITIONS: Readonly<Record<Phase, readonly Phase[]>> = {
  connecting: ['connected', 'closing', 'lost'],
  connected: ['connected', 'suspended', 'closing', 'lost'],
  suspended: ['connected', 'closing', 'lost'],
  closing: ['lost', 'closed'],
  lost: ['lost-closed'],
  closed: [],
  'lost-closed': [],
};

/** The phases that take requests. */
const LIVE: readonly Phase[] = ['connecting', 'connected', 'suspended'];

/** The events that make a session usable: the first connection, or a reconnection. */
const UP: readonly string[] = ['connected', 'reconnected'];

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
  /** The client's namespace: lock paths hang below it; never made a lock path, never removed. */
  namespace?: string;
  /** @internal Builds the session's wire (a spec hands a stand-in). */
  openWire?: (options: WireOptions) => ZkWire;
}

/**
 * The shape check every path gets before it is sent (an AssertionError, thrown synchronously):
 * absolute, no trailing `/`, no empty or relative segment, in that order (the first rule broken is
 * named). The engine checks the full rules of ZooKeeper's PathUtils itself (paths.ts); this guards
 * the session's own callers. One pass over the characters.
 */
export function validatePath(path: string): void {
  if (!path || typeof path !== 'string') return refuse('Node path must be a non-empty string.');
  if (path[0] !== '/') return refuse('Node path must start with / character.');
  const last = path.length - 1;
  if (last === 0) return;
  if (path[last] === '/') return refuse('Node path must not end with / character.');
  let relative = false;
  let start = 1; // the current segment's first character
  for (let i = 1; i <= path.length; i++) {
    if (i <= last && path.charCodeAt(i) !== SLASH) continue;
    const length = i - start;
    if (length === 0) return refuse('Node path must not contain empty node name.');
    if (length <= 2 && path.charCodeAt(start) === DOT && path.charCodeAt(i - 1) === DOT) {
      relative = true;
    }
    start = i + 1;
  }
  if (relative) refuse('Node path must not contain relative path(s).');
}

const SLASH = 47;
const DOT = 46;

function refuse(message: string): never {
  throw new AssertionError({ message });
}

/**
 * The connection string as connection-string.ts reads it (an AssertionError naming the bad part),
 * its chroot checked as every path is. The servers are shuffled, as every ZooKeeper client does,
 * so that clients of one connection string spread over the ensemble.
 */
function connectionTarget(connectionString: string): ConnectionTarget {
  const read = parseConnectionString(connectionString);
  if (!read.ok) throw new AssertionError({ message: `connectionString: ${read.reason}.` });
  const { servers, chroot } = read.parsed;
  if (chroot !== undefined) validatePath(chroot);
  for (let i = servers.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [servers[i], servers[j]] = [servers[j], servers[i]];
  }
  return { servers, chroot };
}

/** How a holder's loss reads when the servers refused our credentials (see authFailure). */
const AUTH_REFUSED =
  "the servers refused this client's `auth` credentials (AUTH_FAILED) and closed the session; " +
  'fix them and connect a new client';

/**
 * One ZooKeeper session over our wire, whole state machine here (docs/design.md "The session's
 * states"): the wire's events, the clock's verdicts and the owner's calls move the phase along
 * TRANSITIONS only. Emits 'connected', 'suspended', 'reconnected', 'lost' (LossReason), 'closed';
 * a lost session is never revived (the owner creates a new one).
 */
export class ZkSession extends EventEmitter {
  private readonly wire: ZkWire;
  private readonly requests: SessionRequests;
  private readonly watches = new DataWatches();
  private readonly clock: SessionClock;
  private readonly failures: ConnectFailures;
  private readonly credentials: ZkCredentials;
  /** Whether the nodes a lock relies on must carry our ACL (see ZkCredentials.checkAcl). */
  readonly checksAcl: boolean;
  // These four are written here only; plain fields, so the engine's and the connection's reads
  // (on every request, on a loss) run nothing.
  /** The namespace of the client this session serves (ZkSessionOptions.namespace). */
  readonly namespace: string | undefined;
  /** Hex session id, known once connected; written by the handshake only. */
  id = '';
  /** Lost because this process stalled (paused, blocked) past the timeout, not ZooKeeper. */
  lostToStall = false;
  /** The servers answered AUTH_FAILED: the session is lost, and a new one would fail the same. */
  authFailure?: ZooKeeperAuthFailedError;
  private current: Phase = 'connecting';
  /** What `state` reports while closing: the state the owner closed it in. */
  private shown: SessionState = 'connecting';
  private probing = false;
  private ticker?: NodeJS.Timeout;
  private endTimer?: NodeJS.Timeout;
  private endsAt = Infinity;
  private resolveEnded!: () => void;
  private readonly ended = new Promise<void>((resolve) => (this.resolveEnded = resolve));

  constructor(private readonly options: ZkSessionOptions) {
    super();
    this.setMaxListeners(0);
    this.namespace = options.namespace;
    const credentials = options.credentials ?? ZkCredentials.none;
    this.credentials = credentials;
    this.checksAcl = credentials.checksAcl;
    // Read once: a reconnect asks the credentials nothing (a TLS socket's options aside).
    const tls = credentials.usesTls;
    const target = connectionTarget(options.connectionString);
    this.failures = new ConnectFailures(() => target.servers.length);
    this.clock = new SessionClock(options.sessionTimeoutMs);
    const openWire = options.openWire ?? ((wire: WireOptions) => new ZkWire(wire));
    this.wire = openWire({
      target,
      sessionTimeoutMs: options.sessionTimeoutMs,
      tlsOptions: tls ? (server) => credentials.tlsOptions(server) : undefined,
      authPackets: credentials.authPackets(),
      // The wire's events: inputs of the state machine.
      handlers: {
        connected: (id) => this.handshaken(id),
        disconnected: () => {
          if (!this.live) return;
          this.clock.disconnected();
          if (this.current === 'connected') this.to('suspended');
        },
        expired: () => this.lose('session-expired'),
        authFailed: () => {
          this.authFailure = new ZooKeeperAuthFailedError(options.connectionString, 'digest');
          this.lose('connection-lost');
        },
        answered: () => this.heard(),
        socketFailed: (err, server, secured) => {
          if (!tls) return this.failures.socketFailed(err);
          const failure = describeTlsFailure(err, server, secured);
          const at = `${server.host}:${server.port}`;
          if (this.failures.tlsFailed(failure, at, refusedForGood(err as { code?: string })))
            this.emit('refused');
        },
        mayConnect: () => {
          if (this.current === 'closing') this.end(); // the owner's close, no connection left
          if (this.isEnded) return false;
          this.clock.attempting();
          return true;
        },
        ended: () => this.end(),
      },
    });
    this.requests = new SessionRequests({
      timeoutMs: options.requestTimeoutMs,
      wire: this.wire,
      chroot: target.chroot,
      acl: credentials.aclList as AclEntry[],
      gone: (op, path) => this.goneError(op, path),
      authFailure: () => this.authFailure,
      roundTrips: options.roundTrips,
    });
    if (options.firstXid !== undefined) this.wire.startXidsAt(options.firstXid);
  }

  /** The phase the state machine is in (`state` is what it reports). */
  get phase(): Phase {
    return this.current;
  }

  get state(): SessionState {
    return this.shown;
  }

  /** Connecting, connected or suspended, also while the owner's close is under way. */
  get alive(): boolean {
    return this.shown === 'connected' || this.shown === 'suspended' || this.shown === 'connecting';
  }

  get connectionString(): string {
    return this.options.connectionString;
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
    if (this.authFailure) return AUTH_REFUSED;
    return reason === 'session-expired'
      ? `the ZooKeeper session expired, so the server deleted ${nodes}`
      : 'ZooKeeper was unreachable for longer than the session timeout';
  }

  /**
   * Connected and heard from within the safe window (2/3 of the session timeout): only then may
   * a lock be granted or handed on. A plain read; checkProvenAlive also applies the clock's rules.
   */
  get provenAlive(): boolean {
    return this.state === 'connected' && this.clock.withinSafeWindow();
  }

  /**
   * provenAlive, for a grant; when false on a connected session the clock's rules apply right
   * after, so a session silent too long (a process that just woke) ends before the caller's next
   * timer runs.
   */
  checkProvenAlive(): boolean {
    if (this.provenAlive) return true;
    if (this.state === 'connected') process.nextTick(() => this.checkLiveness());
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
    if (this.alive && !this.isEnded) this.tick(Date.now());
  }

  start(): void {
    this.clock.start();
    this.ticker = setInterval(() => this.tick(Date.now()), this.clock.tickMs);
    this.ticker.unref();
    this.wire.start();
  }

  /** A server answers again: a lost session still closing has a session timeout from now. */
  serverReachable(): void {
    if (this.current === 'lost') this.endWithinAtMost(this.options.sessionTimeoutMs);
  }

  /** Resolves once connected again: true, or false if the session is lost or closed first. */
  whenUsable(): Promise<boolean> {
    if (this.state === 'connected') return Promise.resolve(true);
    if (!this.alive) return Promise.resolve(false);
    return this.nextOf([...UP, 'lost', 'closed'], (event) => UP.includes(event));
  }

  /** Resolves once connected; rejects on `timeoutMs`, the end, or TLS refused everywhere. */
  async waitConnected(timeoutMs: number): Promise<void> {
    if (this.state === 'connected') return;
    const gone = (): Error => this.goneError('connect', '/');
    if (!this.alive || this.refusedEverywhere) throw gone();
    const failure = await this.nextOf(
      [...UP, 'lost', 'closed', 'refused'],
      (event) => {
        if (UP.includes(event)) return undefined;
        if (event !== 'timeout') return gone();
        const message = `no session within ${timeoutMs} ms`;
        return new ZkRequestError(ZkCode.REQUEST_TIMEOUT, 'connect', '/', message);
      },
      timeoutMs,
    );
    if (failure) throw failure;
  }

  create(path: string, data: Buffer | null, mode: number): Promise<string> {
    return this.requests.create(path, data, mode);
  }

  /** create, with `parents` created first in the same transaction (SessionRequests'). */
  createWithParents(...args: Parameters<SessionRequests['createWithParents']>): Promise<string> {
    return this.requests.createWithParents(...args);
  }

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
   * Data and stat of a node; NO_NODE rejects and leaves no watch (unlike exists). A watcher joins
   * the session's one data watch per path (DataWatches).
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
   * The owner's close: closes the session (deleting its ephemeral nodes) and resolves once ended,
   * within `graceMs` when the server must answer, at once without a connection. A lost session
   * waits only for a close already written, whose reset could keep its nodes until they expire.
   */
  close(graceMs = this.options.requestTimeoutMs): Promise<void> {
    if (this.live) {
      this.to('closing');
      this.endWithin(graceMs);
    } else if (this.current === 'lost') {
      if (this.wire.closeOnConnection) this.endWithinAtMost(graceMs);
      else this.end();
    }
    return this.ended;
  }

  /** May take requests: live, and not being closed. */
  private get live(): boolean {
    return LIVE.includes(this.current);
  }

  /** Lost or ended: nothing the wire reports changes it any more. */
  private get over(): boolean {
    return this.current === 'lost' || this.isEnded;
  }

  private get isEnded(): boolean {
    return this.current === 'closed' || this.current === 'lost-closed';
  }

  /** Moves the phase along TRANSITIONS (else false); leaving the live phases refuses requests. */
  private to(next: Phase, reason?: LossReason): boolean {
    if (!TRANSITIONS[this.current].includes(next)) return false;
    const from = this.current;
    const wasLive = this.live;
    this.current = next;
    if (wasLive && !this.live) this.requests.refuseAll();
    if (next !== 'closing' && next !== 'lost-closed') this.shown = next;
    if (next === 'connected') this.emit(from === 'connecting' ? 'connected' : 'reconnected');
    else if (next === 'suspended') this.emit('suspended');
    else if (next === 'lost') this.emit('lost', reason);
    return true;
  }

  /**
   * A connection's handshake completed; a lost session closes itself on the server now. With
   * `auth`, connected only once an exists('/') sent behind the AUTH packets is answered: the server
   * answers AUTH first, and closes the connection on AUTH_FAILED.
   */
  private handshaken(id: string): void {
    if (this.over) {
      if (this.current !== 'lost') return;
      this.wire.closeSession();
      return this.endWithinAtMost(this.options.sessionTimeoutMs);
    }
    const first = this.current === 'connecting';
    this.id = id;
    this.heard();
    if (!this.clock.connected(this.wire.negotiatedTimeoutMs)) return this.lose('session-expired');
    if (this.clock.stale) this.probe(); // a handshake answered after a stall
    this.failures.connected();
    if (!first || this.credentials.authCount === 0) return void this.to('connected');
    void this.requests.probe().then((answered) => {
      if (answered && this.current === 'connecting' && this.wire.connected) this.to('connected');
    });
  }

  /**
   * Over for us; closes itself on the server if it can. A restarted server restores the session and
   * keeps its nodes a session timeout past its start, so one our clock ended keeps trying until a
   * server answers (serverReachable); one the server expired or refused has a timeout from now.
   */
  private lose(reason: LossReason): void {
    if (this.over) return;
    this.lostToStall = this.clock.stale;
    if (!this.to('lost', reason)) return;
    const untilReachable = reason === 'connection-lost' && !this.authFailure;
    if (untilReachable && !this.wire.connected) return;
    this.endWithin(this.options.sessionTimeoutMs);
  }

  /** The clock's rules, applied at `now`: what its verdict asks is done here. */
  private tick(now: number): void {
    const { stalled, verdict } = this.clock.tick(now);
    if (stalled) process.nextTick(() => this.probe());
    if (verdict === 'expired') {
      clearInterval(this.ticker);
      this.lose('connection-lost');
    } else if (verdict === 'silent' || verdict === 'stuck') {
      this.wire.dropSocket(); // the next server is tried
    } else if (verdict === 'quiet') {
      this.probe();
    }
  }

  /** An answer to one of our requests was read: the clock is told (a stall asks for a probe). */
  private heard(): void {
    if (this.clock.heard()) process.nextTick(() => this.probe());
  }

  /** After a stall or a quiet spell: a request sent now whose reply proves the session alive. */
  private probe(): void {
    if (this.probing || !this.live) return;
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

  /**
   * Loss and close: CLOSE_SESSION when connected, then `graceMs` for the server to close the
   * socket. Without a connection a closing session ends at once, a lost one waits `graceMs` for a
   * reconnect (handshaken sends the close then).
   */
  private endWithin(graceMs: number): void {
    if (this.endTimer) return; // already ending
    if (this.wire.connected) {
      this.wire.closeSession();
      this.endWithinAtMost(graceMs);
    } else if (this.current === 'lost') {
      this.endWithinAtMost(graceMs);
    } else {
      this.end();
    }
  }

  /** Ends the session within `ms` at the latest: an end already due sooner stays as it is. */
  private endWithinAtMost(ms: number): void {
    const at = Date.now() + ms;
    if (at >= this.endsAt) return;
    clearTimeout(this.endTimer);
    this.endsAt = at;
    this.endTimer = setTimeout(() => this.end(), ms);
    this.endTimer.unref(); // never keeps the process alive
  }

  /** The one place a session ends, whatever ended it: no socket, no timer, no listener. */
  private end(): void {
    if (this.isEnded) return;
    clearTimeout(this.endTimer);
    if (this.live) this.to('closing');
    this.to(this.current === 'lost' ? 'lost-closed' : 'closed');
    clearInterval(this.ticker);
    this.watches.clear();
    this.wire.end();
    // After the wire, which fails the requests still under way: then none keeps its timer.
    this.requests.idle();
    this.emit('closed');
    this.removeAllListeners();
    this.resolveEnded();
  }

  /** The first of `events` emitted (or 'timeout' after `timeoutMs`), read by `settle`; no leak. */
  private nextOf<T>(
    events: readonly string[],
    settle: (event: string) => T,
    timeoutMs?: number,
  ): Promise<T> {
    return new Promise((resolve) => {
      const listeners = events.map((event) => [event, () => done(event)] as const);
      const done = (event: string): void => {
        clearTimeout(timer);
        for (const [name, listener] of listeners) this.off(name, listener);
        resolve(settle(event));
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs, 'timeout');
      for (const [name, listener] of listeners) this.on(name, listener);
    });
  }

  /** The error for a request or wait the session no longer takes (lost, closing or closed). */
  private goneError(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.SESSION_GONE,
      op,
      path,
      `ZooKeeper ${op} "${path}": session ${this.id || '(none)'} is ${this.state}`,
    );
  }
}

/** What a tick of the clock asks of the session (docs/design.md "The session's states"). */
type ClockVerdict =
  /** Not heard from for a whole session timeout: the server has expired the session by now. */
  | 'expired'
  /** Connected, but the server has been silent for 2/3 of the timeout (a half-open socket). */
  | 'silent'
  /** Connected, no answer for half the timeout: a request's answer tells more than a ping's. */
  | 'quiet'
  /** A connection attempt (TCP + handshake) is taking too long: try the next server. */
  | 'stuck';

/**
 * Our own view of the session's liveness, by the Java client's rules: gone once a session timeout
 * passed since the server was last heard; within 2/3 of it a lock may be granted or trusted
 * (docs/design.md 'What "holding" means, and when it ends'). After a stall (SIGSTOP, GC), data
 * read is news only once a request sent after it is answered (`confirmed`). It keeps no timer.
 */
export class SessionClock {
  private lastHeard = Date.now();
  private timeoutMs: number;
  private isConnected = false;
  private everConnected = false;
  private attemptStartedAt = 0;
  private interval = 500;
  /** Last time this process was seen running (a tick, or data read without a stall). */
  private lastAwakeAt = Date.now();
  /** When the last stall ended; data read since counts only once a later request is answered. */
  private resumedAt = 0;
  private untrusted = false;

  constructor(private readonly requestedTimeoutMs: number) {
    this.timeoutMs = requestedTimeoutMs;
  }

  /** Starts the clock now: the session ticks it every `tickMs` from here. */
  start(): void {
    this.interval = Math.max(50, Math.min(500, Math.floor(this.timeoutMs / 10)));
    this.lastAwakeAt = Date.now();
  }

  get tickMs(): number {
    return this.interval;
  }

  /**
   * An answer to one of our requests was read now (not a notification). True after a stall: it
   * proves nothing, and only the reply to a request sent now proves life.
   */
  heard(now = Date.now()): boolean {
    if (this.noticeStall(now)) return true;
    if (!this.untrusted) this.lastHeard = now;
    return false;
  }

  /** A request sent at `sentAt` was answered: the server had our session at sentAt or later. */
  confirmed(sentAt: number): void {
    if (sentAt > this.lastHeard) this.lastHeard = sentAt;
    if (sentAt >= this.resumedAt) this.untrusted = false;
  }

  /**
   * Connected, with the negotiated session timeout. The clock runs on the smaller of it and the
   * one asked for (a shorter clock tells a loss early, never late). False for a timeout that is
   * not positive (Java's client ends the session on it).
   */
  connected(negotiatedTimeoutMs: number): boolean {
    if (!(negotiatedTimeoutMs > 0)) return false;
    this.timeoutMs = Math.min(this.requestedTimeoutMs, negotiatedTimeoutMs);
    // The handshake answers the connect request of this attempt.
    if (this.attemptStartedAt) this.confirmed(this.attemptStartedAt);
    this.isConnected = true;
    this.everConnected = true;
    this.attemptStartedAt = 0;
    return true;
  }

  disconnected(): void {
    this.isConnected = false;
  }

  attempting(): void {
    this.attemptStartedAt = Date.now();
  }

  /** A stall happened and no request sent since has been answered yet. */
  get stale(): boolean {
    return this.untrusted;
  }

  /** Milliseconds since the server was last heard from. */
  silenceMs(now = Date.now()): number {
    return now - this.lastHeard;
  }

  /** 2/3 of the session timeout: heard from within it, the server still has our session. */
  get safeWindowMs(): number {
    return Math.floor((this.timeoutMs * 2) / 3);
  }

  /** Heard from within the safe window (connected or not). */
  withinSafeWindow(now = Date.now()): boolean {
    return this.silenceMs(now) <= this.safeWindowMs;
  }

  /** The rules at `now`: `stalled` if this process did not run for a while (see heard), verdict. */
  tick(now: number): { stalled: boolean; verdict?: ClockVerdict } {
    const stalled = this.noticeStall(now);
    const silence = this.silenceMs(now);
    // First: a silence longer than the session timeout ends the session, even while the
    // socket still looks connected (a process that was paused and just woke up).
    if (this.everConnected && silence > this.timeoutMs) return { stalled, verdict: 'expired' };
    if (this.isConnected) {
      if (silence > this.safeWindowMs) {
        this.isConnected = false;
        return { stalled, verdict: 'silent' };
      }
      return { stalled, verdict: silence > this.timeoutMs / 2 ? 'quiet' : undefined };
    }
    if (this.attemptStartedAt && now - this.attemptStartedAt > Math.max(500, this.timeoutMs / 3)) {
      this.attemptStartedAt = now;
      return { stalled, verdict: 'stuck' };
    }
    return { stalled };
  }

  /**
   * Whether this process did not run for longer than a few ticks and 1/6 of the session timeout
   * before `now` (data read later by less stays within the safe window's 1/3 margin).
   */
  private noticeStall(now: number): boolean {
    const stalled = now - this.lastAwakeAt > Math.max(2 * this.interval, this.timeoutMs / 6);
    this.lastAwakeAt = now;
    if (!stalled) return false;
    this.untrusted = true;
    this.resumedAt = now;
    return true;
  }
}

export interface Listing {
  children: string[];
  /** czxid of the listed node (the lock node), as a bigint. */
  czxid: bigint;
  /** Its Stat's cversion (child changes; see nextSequence for how it relates to sequences). */
  cversion: number;
  /** Its data version (with czxid, it tells whether the node's data changed since a read). */
  version: number;
}

/** A node to create: its path, data and CreateMode. */
export interface NewNode {
  path: string;
  data: Buffer | null;
  mode: number;
}

/** What the requests are given by the session they belong to. */
interface RequestsOptions {
  timeoutMs: number;
  wire: ZkWire;
  /** The connection string's chroot, prefixed to every path sent. */
  chroot?: string;
  /** The ACL of every node created (ZkCredentials.aclList). */
  acl: readonly AclEntry[];
  /** The error for a request once the session takes none (see refuseAll). */
  gone(op: string, path: string): ZkRequestError;
  /** Set once the servers refused our credentials (a request's AUTH_FAILED then says so). */
  authFailure(): ZooKeeperAuthFailedError | undefined;
  /** Told the round trip of each request answered without error (the client's estimate). */
  roundTrips?: RoundTrips;
}

/** A frame of `bytes` over MAX_REQUEST_BYTES: refused before sending (options add up). */
function tooLong(bytes: number, op: string, path: string): InvalidLockOptionsError {
  return new InvalidLockOptionsError(
    `ZooKeeper ${op} "${path}"`,
    `its request is ${bytes} bytes, over the limit of ${MAX_REQUEST_BYTES} bytes (the servers' ` +
      'default jute.maxbuffer: a server drops the connection on a longer request)',
    "Shorten what it carries: the lock path, the client's nodeData, or its auth ids with " +
      "acl: 'creator'",
  );
}

/** Builds every request (path check, jute) and gives it a deadline and exactly one answer. */
export class SessionRequests {
  private readonly deadlines: RequestDeadlines;
  private refusing = false;

  constructor(private readonly options: RequestsOptions) {
    this.deadlines = new RequestDeadlines(options.timeoutMs);
  }

  create(path: string, data: Buffer | null, mode: number): Promise<string> {
    const { acl, chroot } = this.options;
    const encode = (): Buffer => encodeCreate(0, path, data, acl, mode, chroot);
    return this.send('create', path, encode, (r) => (r as { path: string }).path);
  }

  /**
   * Creates `parents` (top down), then the node at `path`, in one transaction (a multi): all or
   * none. The node's path; a failure is the first failing create's error (NONODE: the topmost
   * parent's parent is missing; NODEEXISTS: a parent exists).
   */
  createWithParents(
    parents: readonly NewNode[],
    path: string,
    data: Buffer | null,
    mode: number,
  ): Promise<string> {
    const { acl, chroot } = this.options;
    const encode = (): Buffer => {
      for (const parent of parents) validatePath(parent.path);
      const ops = [...parents, { path, data, mode }].map((node) => ({
        type: OP.CREATE,
        path: node.path,
        data: node.data,
        acl,
        flags: node.mode,
      }));
      return encodeMulti(0, ops, chroot);
    };
    return this.send('create', path, encode, (r) => (r as { paths: string[] }).paths.at(-1)!);
  }

  /** Writes `data` to `path` if the node is still at `version`; the node's new Stat. */
  setData(path: string, data: Buffer, version: number): Promise<Stat> {
    const encode = (): Buffer => encodeSetData(0, path, data, version, this.options.chroot);
    return this.send('setData', path, encode, (r) => (r as { stat: Stat }).stat);
  }

  getAcl(path: string): Promise<AclEntry[]> {
    const encode = (): Buffer => encodeGetAcl(0, path, this.options.chroot);
    return this.send('getACL', path, encode, (r) => (r as { acl: AclEntry[] }).acl);
  }

  remove(path: string, version: number): Promise<void> {
    const encode = (): Buffer => encodeDelete(0, path, version, this.options.chroot);
    return this.send('delete', path, encode, () => undefined);
  }

  /**
   * exists('/') with no deadline: true once the server answers it (any answer, a missing chroot
   * node too), false when its connection drops first. Its answer proves the server has the
   * session (docs/design.md 'What "holding" means, and when it ends'); one at a time is enough.
   */
  probe(): Promise<boolean> {
    if (this.refusing) return Promise.resolve(false);
    const frame = encodePathWatch(0, OP.EXISTS, '/', false, this.options.chroot);
    return new Promise((resolve) =>
      this.options.wire.request(OP.EXISTS, frame, (code) =>
        resolve(code === 0 || code === ZkCode.NO_NODE),
      ),
    );
  }

  async getChildren(path: string, watcher?: Watcher): Promise<Listing> {
    const { children, stat } = await this.read<{ children: string[]; stat: Stat }>(
      'getChildren',
      OP.GET_CHILDREN2,
      path,
      watcher,
    );
    return {
      children,
      czxid: stat.czxid.readBigUInt64BE(0),
      cversion: stat.cversion,
      version: stat.version,
    };
  }

  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer | null; stat: Stat }> {
    return this.read('getData', OP.GET_DATA, path, watcher);
  }

  /** The session takes no more requests (closing, lost or ended): each is refused at once. */
  refuseAll(): void {
    this.refusing = true;
  }

  /** The session ended: its deadline timer stops once nothing is pending. */
  idle(): void {
    this.deadlines.idle();
  }

  /** getChildren2 or getData: the decoded payload; a watcher registered once it succeeded. */
  private read<T>(
    op: 'getChildren' | 'getData',
    type: typeof OP.GET_CHILDREN2 | typeof OP.GET_DATA,
    path: string,
    watcher: Watcher | undefined,
  ): Promise<T> {
    const encode = (): Buffer => encodePathWatch(0, type, path, !!watcher, this.options.chroot);
    return this.send(op, path, encode, (r) => {
      if (watcher) this.options.wire.watch(op === 'getData' ? 'data' : 'child', path, watcher);
      const { children, data, stat } = r as { children?: string[]; data?: Buffer; stat: Stat };
      return (op === 'getData' ? { data, stat } : { children, stat }) as T;
    });
  }

  /**
   * A jute request: the path checked (a bad one throws before sending), `encode`d (one call into
   * jute.ts builds the frame, under the chroot), size-checked, written; `answer` decodes its reply.
   */
  private send<T>(
    op: string,
    path: string,
    encode: () => Buffer,
    answer: (payload: ReplyPayload) => T,
  ): Promise<T> {
    if (this.refusing) return Promise.reject(this.options.gone(op, path));
    return new Promise<T>((resolve, reject) => {
      // The path's check and the frame's size throw synchronously: the promise rejects with it.
      validatePath(path);
      const frame = encode();
      if (frame.length - 4 > MAX_REQUEST_BYTES) throw tooLong(frame.length - 4, op, path);
      let settled = false;
      const deadline = this.deadlines.add(() => {
        settled = true;
        reject(this.unanswered(op, path));
      });
      const sentAt = performance.now();
      this.options.wire.request(frame.readInt32BE(TYPE_OFFSET), frame, (code, payload) => {
        if (settled) return;
        settled = true;
        this.deadlines.settle(deadline);
        // The one error the caller sees; every code decodes, so a code the engine does not act
        // on (a quota, a newer server's) fails at once, not in doubt, no retry.
        if (code !== 0) return reject(requestError(code, op, path, this.options.authFailure()));
        this.options.roundTrips?.observe(performance.now() - sentAt);
        resolve(answer(payload ?? null));
      });
    });
  }

  /** The error for a request that got no answer within the timeout. */
  private unanswered(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.REQUEST_TIMEOUT,
      op,
      path,
      `ZooKeeper ${op} "${path}" got no answer within ${this.options.timeoutMs} ms`,
    );
  }
}

/**
 * The client's request round trip, smoothed as TCP does (RFC 6298): `timeoutMs` is SRTT + 4 *
 * RTTVAR. One per client, fed by the replies its sessions' requests get (SessionRequests).
 */
export class RoundTrips {
  private smoothed?: number;
  private variation = 0;

  /** A request was answered `ms` milliseconds after it was sent. */
  observe(ms: number): void {
    if (!(ms >= 0)) return;
    if (this.smoothed === undefined) {
      this.smoothed = ms;
      this.variation = ms / 2;
    } else {
      this.variation = 0.75 * this.variation + 0.25 * Math.abs(this.smoothed - ms);
      this.smoothed = 0.875 * this.smoothed + 0.125 * ms;
    }
  }

  /** What an answered request takes at most, as observed; undefined before any answer. */
  get timeoutMs(): number | undefined {
    return this.smoothed === undefined ? undefined : this.smoothed + 4 * this.variation;
  }
}

/**
 * One timer for a session's request timeouts: all are equal, so insertion order is deadline order
 * and the timer waits for the oldest. Unref'd (the socket keeps the process alive); stops once
 * nothing is pending.
 */
export class RequestDeadlines {
  private readonly pending = new Map<number, { deadline: number; expire(): void }>();
  private nextId = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly timeoutMs: number) {}

  /** Calls `expire` once the timeout has passed, unless `settle(id)` comes first. */
  add(expire: () => void): number {
    const id = this.nextId++;
    this.pending.set(id, { deadline: Date.now() + this.timeoutMs, expire });
    if (!this.timer) this.arm(this.timeoutMs);
    return id;
  }

  settle(id: number): void {
    this.pending.delete(id);
  }

  /** Stops the timer when nothing is pending (a closed session leaves no timer behind). */
  idle(): void {
    if (this.pending.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => this.sweep(), delayMs);
    this.timer.unref();
  }

  private sweep(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const [id, entry] of this.pending) {
      if (entry.deadline > now) return this.arm(entry.deadline - now);
      this.pending.delete(id);
      entry.expire();
    }
  }
}

interface PathWatch {
  watchers: Set<Watcher>;
  dispatcher: Watcher;
}

/**
 * One dispatcher per path registered with the wire (which keeps callbacks until the node
 * changes), so waiters that gave up leave here instead of piling up there.
 */
class DataWatches {
  private readonly paths = new Map<string, PathWatch>();

  /** Adds `watcher` to the path's watch; returns the callback to register, if none is yet. */
  join(path: string, watcher: Watcher): Watcher | undefined {
    const existing = this.paths.get(path);
    if (existing) {
      existing.watchers.add(watcher);
      return undefined;
    }
    const entry: PathWatch = {
      watchers: new Set([watcher]),
      dispatcher: (event: WatcherEvent) => {
        if (this.paths.get(path) === entry) this.paths.delete(path);
        for (const w of entry.watchers) w(event);
      },
    };
    this.paths.set(path, entry);
    return entry.dispatcher;
  }

  /** The request that would have set `dispatcher` failed: no watch is set, the next registers. */
  notSet(path: string, dispatcher: Watcher): void {
    if (this.paths.get(path)?.dispatcher === dispatcher) this.paths.delete(path);
  }

  /** Drops a watcher whose waiter gave up; the path's one registration stays. */
  leave(path: string, watcher: Watcher): void {
    this.paths.get(path)?.watchers.delete(watcher);
  }

  /** The session ended: no watch of it fires any more. */
  clear(): void {
    this.paths.clear();
  }
}
