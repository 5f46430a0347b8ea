import { EventEmitter } from 'node:events';
import { connect as tlsConnect } from 'node:tls';
import * as zookeeper from './zk-client';
import type { ConnectFailure } from '../errors';
import { ZooKeeperAuthFailedError } from '../errors';
import { ZkCode, ZkRequestError, codeOf, refusedAccess } from './zk-errors';
import { ZkCredentials } from './zk-credentials';
import { useTlsSockets } from './tls-connect';
import { describeSocketFailure } from './socket-failure';
import { RequestDeadlines } from './request-deadlines';
import { SessionClock } from './session-clock';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const CM_STATES = require('node-zookeeper-client/lib/ConnectionManager.js').STATES as Record<
  string,
  number
>;

/** How a holder's loss reads when the servers refused our credentials (see authFailure). */
const AUTH_REFUSED =
  "the servers refused this client's `auth` credentials (AUTH_FAILED) and closed the session; " +
  'fix them and connect a new client';

export type SessionState = 'connecting' | 'connected' | 'suspended' | 'lost' | 'closed';

export interface ZkSessionOptions {
  connectionString: string;
  sessionTimeoutMs: number;
  requestTimeoutMs: number;
  /** `auth` (sent on every connection), `acl` (of every node created) and `tls`. */
  credentials?: ZkCredentials;
}

export interface Listing {
  children: string[];
  /** czxid of the listed node (the lock node), as a bigint. */
  czxid: bigint;
  /** Its Stat's cversion (child changes; see sequence-wrap.ts for how it relates to sequences). */
  cversion: number;
  /** Its data version (with czxid, it tells whether the node's data changed since a read). */
  version: number;
}

/**
 * One ZooKeeper session over one node-zookeeper-client Client, with promises, request timeouts,
 * and our own liveness clock (see SessionClock). Events: 'connected', 'suspended', 'reconnected',
 * 'lost' (reason: 'session-expired' | 'connection-lost'), 'closed'.
 * A lost session is never revived: the owner creates a new ZkSession.
 */
export class ZkSession extends EventEmitter {
  state: SessionState = 'connecting';
  /** Hex session id, known once connected. */
  id = '';
  /** Lost because this process stalled (paused, blocked) past the timeout, not ZooKeeper. */
  lostToStall = false;
  /** The servers answered AUTH_FAILED: the session is lost, and a new one would fail the same way. */
  authFailure?: ZooKeeperAuthFailedError;

  /** Why `nodes` (e.g. "the lock node") of this lost session are gone, for LockLostError. */
  lossDetail(reason: 'session-expired' | 'connection-lost', nodes: string): string {
    if (this.authFailure) return AUTH_REFUSED;
    return reason === 'session-expired'
      ? `the ZooKeeper session expired, so the server deleted ${nodes}`
      : 'ZooKeeper was unreachable for longer than the session timeout';
  }
  /** Why the last connection attempt failed (TLS or plain), until a session is connected. */
  lastFailure?: ConnectFailure;
  /** Servers whose last TLS handshake failed a certificate check (see refusedEverywhere). */
  private readonly refusedBy = new Set<string>();
  private readonly client: zookeeper.Client;
  private readonly clock: SessionClock;
  private readonly deadlines: RequestDeadlines;
  private closing = false;
  private finished = false;
  private probing = false;
  private corked?: unknown;
  private closedPromise?: Promise<void>;
  /** Undecodable error codes seen in replies, with when (see noteUndecodable). */
  private readonly undecodable = new Map<number, number>();
  private refusedCode?: number;
  /** One node-zookeeper-client data watch per path, shared by our watchers (see getData). */
  private readonly dataWatches = new Map<
    string,
    { watchers: Set<zookeeper.Watcher>; dispatcher: zookeeper.Watcher }
  >();
  private resolveClosed?: () => void;
  private readonly credentials: ZkCredentials;

  constructor(private readonly options: ZkSessionOptions) {
    super();
    this.setMaxListeners(0);
    this.client = zookeeper.createClient(options.connectionString, {
      sessionTimeout: options.sessionTimeoutMs,
      spinDelay: 200,
      retries: 0,
    });
    this.deadlines = new RequestDeadlines(options.requestTimeoutMs);
    this.clock = new SessionClock(options.sessionTimeoutMs, {
      onSilent: () => this.dropSocket(),
      onStuckConnecting: () => this.dropSocket(),
      onExpiredByClock: () => this.markLost('connection-lost'),
      onStall: () => process.nextTick(() => this.probe()),
      onQuiet: () => this.probe(),
    });
    this.credentials = options.credentials ?? ZkCredentials.none;
    if (this.credentials.usesTls) {
      useTlsSockets(
        this.client.connectionManager,
        (server) =>
          tlsConnect(this.credentials.tlsOptions({ ...server, port: Number(server.port) })),
        (failure, server, forGood) =>
          this.tlsFailed(failure, `${server.host}:${server.port}`, forGood),
      );
    }
    this.instrument(this.client.connectionManager);
    this.client.on('state', (s: { name: string }) => this.onClientState(s.name));
  }

  get connectionString(): string {
    return this.options.connectionString;
  }

  get alive(): boolean {
    return this.state === 'connected' || this.state === 'suspended' || this.state === 'connecting';
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
    if (this.alive && !this.finished) this.clock.tick(Date.now());
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
   * Every server of the connection string refused the TLS handshake on a certificate check:
   * waiting for a session cannot help until certificates or tls options change.
   */
  get refusedEverywhere(): boolean {
    return (
      this.refusedBy.size > 0 && this.refusedBy.size >= this.client.connectionManager.servers.length
    );
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

  /** A TLS attempt failed; a certificate check failing on every server ends waits at once. */
  private tlsFailed(failure: ConnectFailure, server: string, forGood: boolean): void {
    this.lastFailure = failure;
    if (!forGood) {
      this.refusedBy.delete(server);
      return;
    }
    this.refusedBy.add(server);
    if (this.refusedEverywhere) this.emit('refused');
  }

  // ---- requests -------------------------------------------------------------------------

  create(path: string, data: Buffer | null, mode: number): Promise<string> {
    return this.call('create', path, (cb) =>
      this.client.create(path, data, this.credentials.aclList, mode, cb),
    );
  }

  /** Writes `data` to `path` if the node is still at `version` (BAD_VERSION otherwise). */
  setData(path: string, data: Buffer, version: number): Promise<void> {
    return this.call('setData', path, (cb) => this.client.setData(path, data, version, cb));
  }

  /** Deletes `path`; with a `version`, only if the node is still at that version. */
  remove(path: string, version = -1): Promise<void> {
    return this.call('delete', path, (cb) => this.client.remove(path, version, cb));
  }

  async getChildren(path: string, watcher?: zookeeper.Watcher): Promise<Listing> {
    const [children, stat] = await this.call<[string[], zookeeper.Stat]>(
      'getChildren',
      path,
      (cb) => this.client.getChildren(path, watcher, (err, c, s) => cb(err, [c, s])),
    );
    return {
      children,
      czxid: stat.czxid.readBigUInt64BE(0),
      cversion: stat.cversion,
      version: stat.version,
    };
  }

  /**
   * Data and stat of a node; NO_NODE rejects (and leaves no watch behind, unlike exists). A
   * watcher joins the one data watch this session keeps per path: node-zookeeper-client keeps
   * every callback it is given until the node changes, so many waiters on one node (tries that
   * gave up, timed-out waiters) would pile up there; `unwatchData` drops one that is not needed.
   */
  getData(
    path: string,
    watcher?: zookeeper.Watcher,
  ): Promise<{ data: Buffer | null; stat: zookeeper.Stat }> {
    const dispatcher = watcher ? this.joinDataWatch(path, watcher) : undefined;
    const reply = this.call<{ data: Buffer | null; stat: zookeeper.Stat }>('getData', path, (cb) =>
      this.client.getData(path, dispatcher, (err, data, stat) => cb(err, { data, stat })),
    );
    if (dispatcher) {
      // No watch is set when the request fails: the next watcher must register again.
      reply.catch(() => {
        if (this.dataWatches.get(path)?.dispatcher === dispatcher) this.dataWatches.delete(path);
      });
    }
    return reply;
  }

  /** Drops a watcher given to getData (its waiter gave up); the path's one watch stays. */
  unwatchData(path: string, watcher: zookeeper.Watcher): void {
    this.dataWatches.get(path)?.watchers.delete(watcher);
  }

  /** Adds `watcher` to the path's data watch; returns the callback to register, if none is yet. */
  private joinDataWatch(path: string, watcher: zookeeper.Watcher): zookeeper.Watcher | undefined {
    const existing = this.dataWatches.get(path);
    if (existing) {
      existing.watchers.add(watcher);
      return undefined;
    }
    const entry = {
      watchers: new Set([watcher]),
      dispatcher: (event: zookeeper.WatcherEvent) => {
        if (this.dataWatches.get(path) === entry) this.dataWatches.delete(path);
        for (const w of entry.watchers) w(event);
      },
    };
    this.dataWatches.set(path, entry);
    return entry.dispatcher;
  }

  /** Hex session id of an ephemeral node's owner ('0' for a persistent node). */
  static ownerOf(stat: zookeeper.Stat): string {
    return stat.ephemeralOwner.readBigUInt64BE(0).toString(16);
  }

  private call<T>(
    op: string,
    path: string,
    send: (cb: (err: any, value: T) => void) => void,
  ): Promise<T> {
    if (!this.alive || this.closing) return Promise.reject(this.goneError(op, path));
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const deadline = this.deadlines.add(() => {
        settled = true;
        reject(
          this.refusedAnswer(op, path) ??
            new ZkRequestError(
              ZkCode.REQUEST_TIMEOUT,
              op,
              path,
              `ZooKeeper ${op} "${path}" got no answer within ${this.options.requestTimeoutMs} ms`,
            ),
        );
      });
      this.corkUntilNextTick();
      try {
        send((err, value) => {
          if (settled) return;
          settled = true;
          this.deadlines.settle(deadline);
          if (err)
            reject(
              refusedAccess(codeOf(err), op, path, this.authFailure) ??
                new ZkRequestError(
                  codeOf(err) ?? ZkCode.CONNECTION_LOSS,
                  op,
                  path,
                  `ZooKeeper ${op} "${path}": ${err.message ?? err}`,
                ),
            );
          else resolve(value);
        });
      } catch (err) {
        // node-zookeeper-client validates paths with assertions that throw synchronously.
        settled = true;
        this.deadlines.settle(deadline);
        reject(err);
      }
    });
  }

  /**
   * node-zookeeper-client writes each request with its own socket.write; requests issued in
   * the same tick (create + getChildren) leave in one write instead.
   */
  private corkUntilNextTick(): void {
    const socket = this.client.connectionManager.socket;
    if (!socket || this.corked === socket || socket.destroyed) return;
    this.corked = socket;
    socket.cork();
    process.nextTick(() => {
      this.corked = undefined;
      socket.uncork();
    });
  }

  private goneError(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.SESSION_GONE,
      op,
      path,
      `ZooKeeper ${op} "${path}": session ${this.id || '(none)'} is ${this.state}`,
    );
  }

  // ---- state ----------------------------------------------------------------------------

  private onClientState(name: string): void {
    if (this.state === 'lost' || this.state === 'closed') return;
    if (name === 'SYNC_CONNECTED') {
      const first = this.state === 'connecting';
      this.id = this.client.getSessionId().toString('hex').replace(/^0+/, '') || '0';
      this.clock.heard();
      this.clock.connected(this.client.getSessionTimeout());
      if (this.clock.stale) this.probe(); // a handshake answered after a stall
      this.lastFailure = undefined;
      this.refusedBy.clear();
      if (first && this.credentials.authCount > 0) return this.confirmAuth();
      this.state = 'connected';
      this.emit(first ? 'connected' : 'reconnected');
    } else if (name === 'DISCONNECTED' && !this.closing) {
      this.clock.disconnected();
      if (this.state === 'connected') {
        this.state = 'suspended';
        this.emit('suspended');
      }
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
      if (err || this.state !== 'connecting' || this.client.getState().name !== 'SYNC_CONNECTED')
        return;
      this.state = 'connected';
      this.emit('connected');
    });
  }

  private markLost(reason: 'session-expired' | 'connection-lost'): void {
    if (this.state === 'lost' || this.state === 'closed') return;
    this.state = 'lost';
    this.lostToStall = this.clock.stale;
    this.emit('lost', reason);
    // The server may still hold this session (e.g. the whole ensemble was paused). Close it when
    // possible so its ephemeral nodes go at once; give up after another session timeout.
    void this.close(this.options.sessionTimeoutMs);
  }

  /** Closes the session (deleting its ephemeral nodes) and resolves when the socket is closed. */
  close(graceMs = this.options.requestTimeoutMs): Promise<void> {
    if (this.closedPromise) return this.closedPromise;
    this.closedPromise = new Promise<void>((resolve) => (this.resolveClosed = resolve));
    const cm = this.client.connectionManager;
    const connected = cm.state === CM_STATES.CONNECTED;
    this.closing = true;
    const wasLost = this.state === 'lost';
    if (connected || wasLost) {
      // A lost session that reconnects is closed by instrument() once connected.
      if (connected) this.client.close();
      const timer = setTimeout(() => this.forceClosed(), graceMs);
      timer.unref(); // a safety net: it must not keep an otherwise finished process alive
      this.once('socket-closed', () => clearTimeout(timer));
    } else {
      this.forceClosed();
    }
    return this.closedPromise;
  }

  private forceClosed(): void {
    const cm = this.client.connectionManager;
    if (cm.state !== CM_STATES.CLOSED) {
      cm.state = CM_STATES.CLOSING;
      cm.socket?.destroy();
      if (!cm.socket || cm.socket.destroyed) this.finishClose();
    } else {
      this.finishClose();
    }
  }

  private finishClose(): void {
    if (this.finished) return;
    this.finished = true;
    this.clock.stop();
    this.deadlines.idle();
    const cm = this.client.connectionManager;
    cm.state = CM_STATES.CLOSED;
    // A connect attempt still under way has a 10 s timer of node-zookeeper-client's own, which
    // would keep a finished process alive (and fire into a closed client).
    clearTimeout(cm.connectTimeoutHandler);
    cm.socket?.destroy();
    if (this.state !== 'lost') this.state = 'closed';
    this.emit('closed');
    this.removeAllListeners();
    this.client.removeAllListeners();
    const resolve = this.resolveClosed;
    this.resolveClosed = undefined;
    resolve?.();
  }

  /** After a stall: a request sent now whose reply proves the session alive (SessionClock). */
  private probe(): void {
    if (this.probing || !this.alive || this.closing) return;
    this.probing = true;
    const sentAt = Date.now();
    this.client.exists('/', undefined, (err) => {
      this.probing = false;
      if (!err) this.clock.confirmed(sentAt);
      // Another stall while it was under way: that one needs a request sent after it.
      if (!err && this.clock.stale) this.probe();
    });
  }

  /**
   * A reply the client could not decode carried an error code missing from its table (a quota
   * error, or a newer server's code). Its request will only time out, and a create would be
   * retried as "in doubt" forever: the second time the same code comes within a while, the
   * request that then times out fails with that code instead (not in doubt, so not retried).
   */
  private noteUndecodable(frames: Buffer): void {
    const code = undecodableCode(frames);
    if (code === undefined) return;
    const now = Date.now();
    const seen = this.undecodable.get(code);
    const recent = seen !== undefined && now - seen < 5 * this.options.requestTimeoutMs;
    this.undecodable.set(code, now);
    if (recent) this.refusedCode = code;
  }

  /** The error for a request that timed out after an undecodable code came twice (see above). */
  private refusedAnswer(op: string, path: string): ZkRequestError | undefined {
    const code = this.refusedCode;
    if (code === undefined) return undefined;
    this.refusedCode = undefined;
    this.undecodable.delete(code);
    return new ZkRequestError(
      code,
      op,
      path,
      `ZooKeeper answered ${op} "${path}" with error code ${code} twice, a code this client ` +
        'cannot decode (a quota, or an error of a newer server); the request is not retried',
    );
  }

  private dropSocket(): void {
    this.client.connectionManager.socket?.destroy();
  }

  /**
   * Hooks into the client's connection manager (per instance, not its prototype):
   * - every answer to a request of ours (a reply, a ping reply; not a watch notification)
   *   feeds our liveness clock;
   * - a frame the client cannot parse (an error code missing from its table throws) drops the
   *   socket instead of crashing the process, and the session reconnects. The request that
   *   reply was for is never called back and times out (REQUEST_TIMEOUT); those sent behind it
   *   fail with CONNECTION_LOSS when the socket closes (both in doubt). See
   *   test/core/unparsable-reply.e2e-spec.ts;
   * - a reconnect attempt after close() is refused, and close completion is observed.
   */
  private instrument(cm: any): void {
    // Credentials go right behind the ConnectRequest on every new connection, of this session or
    // after a reconnect (the server forgets them with the connection), ahead of every request
    // queued meanwhile. The client's own addAuthInfo would queue them behind those requests.
    const onConnected = cm.onSocketConnected;
    cm.onSocketConnected = () => {
      onConnected.call(cm);
      for (const packet of this.credentials.authPackets()) cm.socket.write(packet);
    };
    // Why a plain connection failed (a name DNS does not know, a refused port): said when no
    // session comes. A TLS connection's failure is described by tls-connect.ts instead.
    const onError = cm.onSocketError;
    cm.onSocketError = (err: Error) => {
      if (!this.credentials.usesTls) this.lastFailure = describeSocketFailure(err);
      onError.call(cm, err);
    };
    const onData = cm.onSocketData;
    cm.onSocketData = (buffer: Buffer) => {
      const frames: Buffer = cm.pendingBuffer ? Buffer.concat([cm.pendingBuffer, buffer]) : buffer;
      // Only an answer to one of our requests proves the server hears us: a watch notification
      // keeps coming while our own bytes are lost (docs/design.md "What holding means").
      if (answersRequest(frames)) this.clock.heard();
      try {
        onData.call(cm, buffer);
      } catch {
        cm.pendingBuffer = null;
        cm.socket?.destroy();
        this.noteUndecodable(frames);
      }
    };
    const connect = cm.connect;
    cm.connect = () => {
      if (this.finished) return;
      if (this.closing && this.state !== 'lost') {
        cm.state = CM_STATES.CLOSED;
        this.finishClose();
        return;
      }
      this.clock.attempting();
      connect.call(cm);
    };
    // No new socket once closed (the client's spin delay would otherwise open one later).
    const findNextServer = cm.findNextServer;
    cm.findNextServer = (cb: (server: unknown) => void) =>
      findNextServer.call(cm, (server: unknown) => {
        if (!this.finished) cb(server);
      });
    const onClosed = cm.onSocketClosed;
    cm.onSocketClosed = (hadError: boolean) => {
      onClosed.call(cm, hadError);
      if (cm.state === CM_STATES.CLOSED || cm.state === CM_STATES.SESSION_EXPIRED) {
        this.emit('socket-closed');
        this.finishClose();
      }
    };
    const setState = cm.setState;
    cm.setState = (s: number) => {
      setState.call(cm, s);
      // A lost session that managed to reconnect: close it now so its nodes go at once.
      if (s === CM_STATES.CONNECTED && this.state === 'lost' && this.closing) this.client.close();
    };
  }
}

/** Error codes node-zookeeper-client 1.1.3 can decode (its Exception table). */
const DECODABLE = new Set([
  0, -1, -2, -3, -4, -5, -6, -7, -8, -100, -101, -102, -103, -108, -110, -111, -112, -113, -114,
  -115,
]);

/** xid of a watch notification: sent by the server on its own, it answers nothing of ours. */
const NOTIFICATION_XID = -1;

/**
 * Whether the complete frames at the start of `frames` include an answer to one of our requests
 * (int32 length, then int32 xid: a reply, a ping reply (-2), or the ConnectResponse, which
 * starts with a protocol version of 0), as opposed to watch notifications only.
 */
function answersRequest(frames: Buffer): boolean {
  for (let at = 0; at + 8 <= frames.length;) {
    const length = frames.readInt32BE(at);
    if (length < 4 || at + 4 + length > frames.length) return false; // incomplete (or garbage)
    if (frames.readInt32BE(at + 4) !== NOTIFICATION_XID) return true;
    at += 4 + length;
  }
  return false;
}

/** The first undecodable error code among the reply frames (int32 length, xid, zxid, err). */
function undecodableCode(frames: Buffer): number | undefined {
  for (let at = 0; at + 20 <= frames.length; at += 4 + frames.readInt32BE(at)) {
    if (frames.readInt32BE(at) < 16) return undefined; // not a reply frame
    const err = frames.readInt32BE(at + 16);
    if (!DECODABLE.has(err)) return err;
  }
  return undefined;
}
