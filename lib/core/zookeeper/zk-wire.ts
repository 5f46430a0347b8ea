/** Owns one session's wire: sockets, framing, requests, watches, pings, reconnects. */
import { Socket, connect as netConnect } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { ConnectionTarget, Watcher, ZkServerAddress } from './zk-client';
import { ZkCode } from './zk-errors';
import {
  OP,
  XID,
  XID_OFFSET,
  encodeConnect,
  encodeHeaderOnly,
  encodeSetWatches,
  EVENT_NAMES,
  Notification,
  ReplyPayload,
  decodeConnectResponse,
  decodeNotification,
  decodeReplyFrame,
} from './jute';

/** What the wire tells its session, and asks it. */
export interface WireHandlers {
  /** A handshake completed on a new connection: the session it carries, its negotiated timeout. */
  connected(sessionId: string, negotiatedTimeoutMs: number): void;
  /** A connection that had completed its handshake dropped; the next one is being tried. */
  disconnected(): void;
  /** The servers answered the handshake with timeout 0: the session is expired. */
  expired(): void;
  /** The servers refused our `auth` credentials (AUTH_FAILED). */
  authFailed(): void;
  /** A frame answering something we sent was read (never a watch notification). */
  answered(): void;
  /** A socket failed (`secured`: its TLS handshake had completed). */
  socketFailed(err: Error, server: ZkServerAddress, secured: boolean): void;
  /** Whether a connection attempt may start now (false: the wire waits to be ended). */
  mayConnect(): boolean;
  /** The wire is over: no socket, no reconnect, every request answered. */
  ended(): void;
}

export interface WireOptions {
  target: ConnectionTarget;
  sessionTimeoutMs: number;
  /** node:tls options for a socket to `server` when the connection uses TLS (ZkCredentials). */
  tlsOptions?: (server: ZkServerAddress) => ConnectionOptions;
  /** The AUTH packets written behind every ConnectRequest (ZkCredentials.authPackets). */
  authPackets: readonly Buffer[];
  handlers: WireHandlers;
  /** Longest random wait before a new round over every server (default 200 ms). */
  spinDelayMs?: number;
  /** Opens an attempt's socket: TCP, or TLS with tlsOptions (a spec hands its own). */
  openSocket?: (server: ZkServerAddress) => Socket;
}

/**
 * A request's answer: 0 and the decoded payload, or the error code that ended it (the server's,
 * or CONNECTION_LOSS, SESSION_EXPIRED, AUTH_FAILED as the connection ended it); every code decodes.
 */
export type Answer = (code: number, payload?: ReplyPayload) => void;

interface Packet {
  type: number;
  /** The whole frame, its xid written in when it is sent. */
  frame: Buffer;
  answer: Answer;
}

type WatchKind = 'data' | 'exist' | 'child';
const WATCH_KINDS: readonly WatchKind[] = ['data', 'exist', 'child'];

/**
 * `connecting` (no connection carries the session), `connected`, `closing` (CLOSE_SESSION asked,
 * nothing else sent; see `closed`), `expired` / `auth-failed` (the servers ended it), `ended` (no
 * socket, no timer, every request answered).
 */
export type WireState =
  'connecting' | 'connected' | 'closing' | 'expired' | 'auth-failed' | 'ended';

const FINAL: readonly WireState[] = ['closing', 'expired', 'auth-failed', 'ended'];

/** The largest int32: no request is numbered with it, the next after 2^31-2 is 1 (write). */
export const MAX_XID = 0x7fffffff;

/**
 * One session's wire, as kazoo's connection.py (docs/design.md "The connection layer"): per
 * attempt a socket and frame reader, the handshake, AUTH and SetWatches; requests answered in
 * order (else the connection drops); pings on idle; the next server on a drop; notifications.
 */
export class ZkWire {
  private current: WireState = 'connecting';
  private socket?: Socket;
  private handshaken = false;
  private sessionId = Buffer.alloc(8);
  private password = Buffer.alloc(16);
  private lastZxid = Buffer.alloc(8);
  private negotiatedMs = 0;
  private xid = 0;
  /** Requests not written yet (no connection up). */
  private outbox: Packet[] = [];
  /** Requests written on the current connection, oldest first, awaiting their reply. */
  private pending: Packet[] = [];
  private readonly watches: Record<WatchKind, Map<string, Set<Watcher>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
  };
  private nextServer = 0;
  private attempts = 0;
  private connectTimer?: NodeJS.Timeout;
  private spinTimer?: NodeJS.Timeout;
  private pingTimer?: NodeJS.Timeout;
  private lastSentAt = 0;

  /** The AUTH packets hold the credentials' secret: a private field, never shown by inspect(). */
  readonly #authPackets: readonly Buffer[];
  private readonly options: Omit<WireOptions, 'authPackets'>;

  constructor({ authPackets, ...options }: WireOptions) {
    this.#authPackets = authPackets;
    this.options = options;
  }

  get state(): WireState {
    return this.current;
  }

  /** A connection whose handshake completed carries the session now. */
  get connected(): boolean {
    return this.current === 'connected' && this.handshaken;
  }

  /** A CLOSE_SESSION was written on the current connection, which the server has not closed. */
  get closeOnConnection(): boolean {
    return this.current === 'closing' && this.handshaken;
  }

  /** The timeout the servers granted (0 until the first handshake). */
  get negotiatedTimeoutMs(): number {
    return this.negotiatedMs;
  }

  /** The local port of the current socket, if any (tests tell a proxy's connections apart). */
  get localPort(): number | undefined {
    return this.socket?.localPort;
  }

  /** The timeout the wire runs by: the negotiated one, never longer than the one asked for. */
  private get timeoutMs(): number {
    const asked = this.options.sessionTimeoutMs;
    return this.negotiatedMs > 0 ? Math.min(asked, this.negotiatedMs) : asked;
  }

  start(): void {
    this.connect();
  }

  /** The session's id and password (tests expire the session with them, as KillSession). */
  sessionCredentials(): { id: Buffer; password: Buffer } {
    return { id: Buffer.from(this.sessionId), password: Buffer.from(this.password) };
  }

  /**
   * Sends a request (`frame` from jute.ts); `answer` gets its reply or the error that ended it
   * (CONNECTION_LOSS on a drop); queued while no connection is up. Its size was checked where it
   * was built (SessionRequests: a frame over the default `jute.maxbuffer` is never handed here).
   */
  request(type: number, frame: Buffer, answer: Answer): void {
    if (FINAL.includes(this.current)) return answer(this.endCode());
    const packet = { type, frame, answer };
    if (!this.connected) return void this.outbox.push(packet);
    this.cork();
    this.write(packet);
  }

  /** Registers `watcher` for `path` once the request that set the watch succeeded. */
  watch(kind: WatchKind, path: string, watcher: Watcher): void {
    const table = this.watches[kind];
    let watchers = table.get(path);
    if (!watchers) table.set(path, (watchers = new Set()));
    watchers.add(watcher);
  }

  /** How many watchers wait on `path` (for tests: no watcher piles up). */
  watcherCount(kind: WatchKind, path: string): number {
    return this.watches[kind].get(path)?.size ?? 0;
  }

  /**
   * Asks the server to close the session (its ephemeral nodes go at once); nothing else is sent,
   * and the wire ends when the server closes the connection. See `closed` for a close in doubt.
   */
  closeSession(): void {
    if (FINAL.includes(this.current)) return;
    const connected = this.connected;
    this.current = 'closing';
    this.fail(this.outbox.splice(0), ZkCode.CONNECTION_LOSS);
    if (connected) {
      this.write({
        type: OP.CLOSE_SESSION,
        frame: encodeHeaderOnly(0, OP.CLOSE_SESSION),
        answer: () => undefined,
      });
    }
  }

  /** Drops the current connection (a silent or stuck one); the next server is tried. */
  dropSocket(): void {
    this.socket?.destroy();
  }

  /** Ends the wire now: no socket, timer or reconnect; requests under way get CONNECTION_LOSS. */
  end(): void {
    if (this.current === 'ended') return;
    this.current = 'ended';
    clearTimeout(this.spinTimer);
    const socket = this.socket;
    this.detach();
    socket?.destroy();
    this.fail([...this.pending.splice(0), ...this.outbox.splice(0)], ZkCode.CONNECTION_LOSS);
    for (const table of Object.values(this.watches)) table.clear();
  }

  /** The error code of a request the wire ends or refuses once it takes no more (FINAL). */
  private endCode(): number {
    if (this.current === 'expired') return ZkCode.SESSION_EXPIRED;
    if (this.current === 'auth-failed') return ZkCode.AUTH_FAILED;
    return ZkCode.CONNECTION_LOSS;
  }

  /** Starts the next attempt: the next server at once, or after a random wait once all tried. */
  private connect(): void {
    if (this.current !== 'connecting' || !this.options.handlers.mayConnect()) return;
    const servers = this.options.target.servers;
    this.nextServer %= servers.length;
    const next = (): void => {
      this.spinTimer = undefined;
      const server = servers[this.nextServer];
      this.nextServer += 1;
      if (this.current === 'connecting') this.open(server);
    };
    if (this.attempts >= servers.length) {
      this.attempts = 0;
      this.spinTimer = setTimeout(next, Math.random() * (this.options.spinDelayMs ?? 200));
    } else {
      this.attempts += 1;
      process.nextTick(next);
    }
  }

  /** One attempt: a socket of its own, with its own frame reader, until it closes. */
  private open(server: ZkServerAddress): void {
    const { tlsOptions, openSocket } = this.options;
    const tls = tlsOptions !== undefined;
    const socket = openSocket
      ? openSocket(server)
      : tls
        ? tlsConnect(tlsOptions(server))
        : netConnect({ host: server.host, port: server.port });
    const reader = new FrameReader();
    let secured = false;
    this.socket = socket;
    this.handshaken = false;
    const servers = this.options.target.servers.length;
    // The attempt, handshake included, gets its share of the session timeout.
    this.connectTimer = setTimeout(() => socket.destroy(), Math.floor(this.timeoutMs / servers));
    socket.setNoDelay();
    socket.on(tls ? 'secureConnect' : 'connect', () => {
      secured = tls;
      if (this.socket === socket) this.prime(socket);
    });
    socket.on('data', (chunk: Buffer) => this.read(socket, reader, chunk));
    socket.on('error', (err: Error) => {
      if (this.socket === socket) this.options.handlers.socketFailed(err, server, secured);
    });
    socket.on('close', () => this.closed(socket));
  }

  /**
   * A connection's first write: ConnectRequest, then AUTH and SetWatches (as the Java client's
   * primeConnection), handled in order before any request queued meanwhile.
   */
  private prime(socket: Socket): void {
    const paths = this.watchedPaths();
    const watched = paths.data.length + paths.exist.length + paths.child.length > 0;
    const frames = [
      encodeConnect({
        lastZxidSeen: this.lastZxid,
        timeoutMs: this.options.sessionTimeoutMs,
        sessionId: this.sessionId,
        password: this.password,
      }),
      ...this.#authPackets,
      ...(watched ? encodeSetWatches(this.lastZxid, paths, this.options.target.chroot) : []),
    ];
    socket.write(Buffer.concat(frames));
    this.lastSentAt = Date.now();
  }

  /** Every path watched (as the session names it: jute puts it under the chroot). */
  private watchedPaths(): Record<WatchKind, string[]> {
    const paths: Record<WatchKind, string[]> = { data: [], exist: [], child: [] };
    for (const kind of WATCH_KINDS) {
      for (const [path, watchers] of this.watches[kind]) {
        if (watchers.size > 0) paths[kind].push(path);
      }
    }
    return paths;
  }

  private read(socket: Socket, reader: FrameReader, chunk: Buffer): void {
    if (this.socket !== socket) return;
    let frames: Buffer[];
    try {
      frames = reader.push(chunk);
    } catch {
      return void socket.destroy(); // not ZooKeeper's bytes
    }
    for (const frame of frames) {
      // A frame may have dropped the connection: the rest belongs to no request of ours.
      if (this.socket !== socket || socket.destroyed) return;
      if (this.handshaken) this.handle(socket, frame);
      else this.handshake(socket, frame);
    }
  }

  /** The ConnectResponse, from the first frame of the connection. */
  private handshake(socket: Socket, frame: Buffer): void {
    clearTimeout(this.connectTimer);
    let response;
    try {
      response = decodeConnectResponse(frame);
    } catch {
      return void socket.destroy();
    }
    const { handlers } = this.options;
    // Closed meanwhile: the close is sent on no connection, so this one only ends the wire.
    if (this.current !== 'connecting') return void socket.destroy();
    if (response.timeoutMs <= 0) {
      this.current = 'expired';
      this.fail(this.outbox.splice(0), ZkCode.SESSION_EXPIRED);
      // The session hears of the answer, then of the expiry, in one visit.
      handlers.answered();
      handlers.expired();
      return void socket.destroy();
    }
    handlers.answered();
    // We never ask for a read-only session: a server that grants one cannot take writes.
    if (response.readOnly) return void socket.destroy();
    this.handshaken = true;
    this.attempts = 0;
    response.sessionId.copy(this.sessionId);
    this.password = Buffer.from(response.password);
    this.negotiatedMs = response.timeoutMs;
    this.current = 'connected';
    this.armPing();
    handlers.connected(sessionHex(this.sessionId), response.timeoutMs);
    if (this.socket !== socket || !this.connected) return;
    if (this.outbox.length > 0) this.cork();
    for (const packet of this.outbox.splice(0)) this.write(packet);
  }

  /** A frame after the handshake: a notification, a reply to a reserved xid, or to a request. */
  private handle(socket: Socket, frame: Buffer): void {
    const packet = this.pending[0];
    let header;
    try {
      header = decodeReplyFrame(frame, packet, this.options.target.chroot);
    } catch {
      return void socket.destroy();
    }
    if (header.xid === XID.NOTIFICATION) return this.notify(socket, frame);
    const { handlers } = this.options;
    if (header.xid === XID.PING || header.xid === XID.SET_WATCHES) return handlers.answered();
    if (header.xid === XID.AUTH) {
      handlers.answered();
      if (header.err === ZkCode.AUTH_FAILED) this.refuseAuth(socket);
      return;
    }
    if (header.answers && header.zxid.readBigInt64BE(0) > 0n) header.zxid.copy(this.lastZxid);
    // The session hears of the frame, then of its request's answer (the code), in one visit.
    handlers.answered();
    // Replies come in the order the requests were written: one that answers another request is a
    // protocol error, and one we cannot read leaves its request in doubt, as every other one on
    // this socket.
    if (!header.answers || header.payload === undefined) return void socket.destroy();
    this.pending.shift();
    packet.answer(header.err, header.payload);
  }

  private refuseAuth(socket: Socket): void {
    this.current = 'auth-failed';
    this.fail(this.outbox.splice(0), ZkCode.AUTH_FAILED);
    this.options.handlers.authFailed();
    socket.destroy();
  }

  /** A notification, to the watchers of its path and kind, then gone (as ZKWatchManager). */
  private notify(socket: Socket, frame: Buffer): void {
    let event: Notification;
    try {
      event = decodeNotification(frame, this.options.target.chroot);
    } catch {
      return void socket.destroy();
    }
    const kinds: readonly WatchKind[] =
      event.type === 1 || event.type === 3
        ? ['data', 'exist']
        : event.type === 4
          ? ['child']
          : event.type === 2
            ? ['data', 'exist', 'child']
            : [];
    const fired = new Set<Watcher>();
    for (const kind of kinds) {
      const watchers = this.watches[kind].get(event.path);
      this.watches[kind].delete(event.path);
      for (const watcher of watchers ?? []) fired.add(watcher);
    }
    const delivered = { type: event.type, name: EVENT_NAMES[event.type], path: event.path };
    for (const watcher of fired) watcher(delivered);
  }

  /**
   * Writes a packet on the connection: numbered (unless its xid is reserved), then awaited. The
   * numbers go 0, 1, ... 2^31-2, then 1 again, as the Java client's getXid (never negative:
   * negative xids are the server's own, -1 a notification, -2 a ping).
   */
  private write(packet: Packet): void {
    const socket = this.socket!;
    if (packet.type !== OP.PING) {
      if (this.xid >= MAX_XID) this.xid = 1;
      packet.frame.writeInt32BE(this.xid++, XID_OFFSET);
      this.pending.push(packet);
    }
    socket.write(packet.frame);
    this.lastSentAt = Date.now();
  }

  /** @internal The next request is numbered `xid` (ZkSessionOptions.firstXid). */
  startXidsAt(xid: number): void {
    this.xid = xid;
  }

  /**
   * Requests issued together leave in one write (docs/design.md "The connection layer"): uncorked
   * at the end of the tick when no reply is awaited, else at setImmediate, so callers sending from
   * their own callbacks share the write (as Nagle's algorithm).
   */
  private cork(): void {
    const socket = this.socket;
    if (!socket || socket.writableCorked > 0 || socket.destroyed) return;
    socket.cork();
    if (this.pending.length > 0) setImmediate(() => socket.uncork());
    else process.nextTick(() => socket.uncork());
  }

  /**
   * Pings once nothing was written for a third of the timeout (the Java client's half of its
   * read timeout), so an idle connection is answered often enough for the session clock.
   */
  private armPing(): void {
    clearTimeout(this.pingTimer);
    const interval = Math.max(1, Math.floor(this.timeoutMs / 3));
    const due = this.lastSentAt + interval - Date.now();
    this.pingTimer = setTimeout(
      () => {
        if (!this.connected) return;
        if (Date.now() - this.lastSentAt >= interval) {
          this.write({
            type: OP.PING,
            frame: encodeHeaderOnly(XID.PING, OP.PING),
            answer: () => undefined,
          });
        }
        this.armPing();
      },
      Math.max(0, due),
    );
    this.pingTimer.unref();
  }

  /**
   * An attempt's socket closed: its requests end, then the next attempt or the end. An unanswered
   * CLOSE_SESSION may not have reached the server, which would keep the nodes until expiry: the
   * wire connects again, and the session (if mayConnect) sends the close there.
   */
  private closed(socket: Socket): void {
    if (this.socket !== socket) return;
    const wasConnected = this.connected;
    this.detach();
    const code = this.endCode();
    const closeInDoubt =
      this.current === 'closing' && this.pending.some((p) => p.type === OP.CLOSE_SESSION);
    this.fail(this.pending.splice(0), code);
    if (FINAL.includes(this.current) && !closeInDoubt) {
      this.fail(this.outbox.splice(0), code);
      this.current = 'ended';
      clearTimeout(this.spinTimer);
      return this.options.handlers.ended();
    }
    this.current = 'connecting';
    if (wasConnected) this.options.handlers.disconnected();
    this.connect();
  }

  /** Forgets the current socket and its timers (its events no longer reach the wire). */
  private detach(): void {
    clearTimeout(this.connectTimer);
    clearTimeout(this.pingTimer);
    this.socket = undefined;
    this.handshaken = false;
  }

  private fail(packets: Packet[], code: number): void {
    for (const packet of packets) packet.answer(code);
  }
}

/** A session id as hex, without leading zeros ('0' for none). */
function sessionHex(id: Buffer): string {
  return id.toString('hex').replace(/^0+/, '') || '0';
}

/**
 * The longest frame accepted from a server (which does not cap what it sends at jute.maxbuffer):
 * longer means bytes that are not ZooKeeper's, and the socket is dropped instead of buffering them.
 */
const MAX_REPLY_FRAME_BYTES = 64 * 1024 * 1024;

/** A length prefix that no ZooKeeper frame has: the connection carries something else. */
class FrameError extends Error {
  constructor(readonly length: number) {
    super(`a frame length of ${length} bytes is not ZooKeeper's`);
    this.name = 'FrameError';
  }
}

/**
 * Splits one socket's bytes into length-prefixed frames (views, no copy). One reader per socket:
 * bytes left from one connection never complete a frame of the next.
 */
class FrameReader {
  private partial?: Buffer;

  /** The complete frames `chunk` ends, in order; FrameError on an impossible length. */
  push(chunk: Buffer): Buffer[] {
    const data = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    this.partial = undefined;
    const frames: Buffer[] = [];
    let at = 0;
    while (data.length - at >= 4) {
      const length = data.readInt32BE(at);
      if (length < 0 || length > MAX_REPLY_FRAME_BYTES) throw new FrameError(length);
      const end = at + 4 + length;
      if (end > data.length) break;
      frames.push(data.subarray(at, end));
      at = end;
    }
    if (at < data.length) this.partial = data.subarray(at);
    return frames;
  }
}
