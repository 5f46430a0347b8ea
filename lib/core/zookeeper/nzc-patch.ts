/**
 * Owns every touch of node-zookeeper-client's private ConnectionManager: the pinned version
 * check, the per-instance hooks, and the writes into its state.
 */
import { readFileSync } from 'node:fs';
import { ZkLockError } from '../errors';
import { REPLY_PAYLOAD_OFFSET, decodeReply, decodesReplyOf } from './jute-replies';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const ConnectionManager = require('node-zookeeper-client/lib/ConnectionManager.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Exception = require('node-zookeeper-client/lib/Exception.js');

/** The only node-zookeeper-client this patch is written for (package.json pins it). */
export const PINNED_CLIENT_VERSION = '1.1.3';

/** Its connection manager's states, as 1.1.3 numbers them. */
export const CM_STATES = {
  DISCONNECTED: 0,
  CONNECTING: 1,
  CONNECTED: 2,
  CONNECTED_READ_ONLY: 3,
  CLOSING: -1,
  CLOSED: -2,
  SESSION_EXPIRED: -3,
  AUTHENTICATION_FAILED: -4,
} as const;

/**
 * The private methods replaced per instance or called (name -> arity), with words their source
 * must still contain: the fields and steps the patch relies on.
 */
const REPLACED: Record<string, { arity: number; uses: string[] }> = {
  connect: { arity: 0, uses: ['net.connect(server)', 'connectTimeoutHandler', 'findNextServer'] },
  findNextServer: {
    arity: 1,
    uses: [
      'self.nextServerIndex %= self.servers.length',
      'self.serverAttempts === self.servers.length',
      'Math.random() * self.spinDelay',
      'self.serverAttempts = 0',
      'self.serverAttempts += 1',
    ],
  },
  setState: { arity: 1, uses: ["this.emit('state'"] },
  onSocketConnected: { arity: 0, uses: ['connectRequest.toBuffer()', 'this.socket.write'] },
  onSocketError: { arity: 1, uses: ['connectTimeoutHandler'] },
  onSocketData: {
    arity: 1,
    uses: [
      'self.pendingBuffer',
      'buffer.length === size + 4',
      'XID_NOTIFICATION',
      'Exception.create',
      // answerOurs does what the client does with a reply: the same queue, zxid and errors.
      'self.pendingQueue.shift()',
      'self.zxid = responseHeader.zxid',
      'Exception.create(responseHeader.err)',
    ],
  },
  onSocketClosed: { arity: 1, uses: ['cleanupPendingQueue', 'STATES.CLOSED'] },
  // Called, not replaced: our requests are queued and written like the client's own.
  queue: { arity: 2, uses: ['this.chrootPath && request.payload', 'this.packetQueue.push'] },
  onPacketQueueReadable: {
    arity: 0,
    uses: [
      'header.xid = this.xid',
      'this.xid += 1',
      'this.pendingQueue.push(packet)',
      'packet.request.toBuffer()',
    ],
  },
  registerDataWatcher: { arity: 2, uses: ['registerDataWatcher(path, watcher)'] },
  registerChildWatcher: { arity: 2, uses: ['registerChildWatcher(path, watcher)'] },
  registerExistenceWatcher: { arity: 2, uses: ['registerExistenceWatcher(path, watcher)'] },
};

/** The installed client is not the one this patch was written for: an upgrade fails loudly. */
export class UnsupportedZooKeeperClientError extends ZkLockError {
  constructor(readonly problems: readonly string[]) {
    super(
      `node-zookeeper-client is not the version nestjs-zookeeper-lock patches ` +
        `(${PINNED_CLIENT_VERSION}): ${problems.join('; ')}. Install node-zookeeper-client@` +
        `${PINNED_CLIENT_VERSION} (\`npm ls node-zookeeper-client\` shows which copy is used), or ` +
        'use a nestjs-zookeeper-lock release made for the installed version',
    );
  }
}

/** What the check reads from the installed client (a parameter so a spec can feed others). */
export interface InstalledClient {
  version: string;
  states: Record<string, number>;
  prototype: Record<string, unknown>;
}

/** Every way `installed` differs from what the patch was written for (empty: none). */
export function clientProblems(installed: InstalledClient): string[] {
  const problems: string[] = [];
  if (installed.version !== PINNED_CLIENT_VERSION) {
    problems.push(`version ${installed.version} is installed`);
  }
  for (const [name, value] of Object.entries(CM_STATES)) {
    if (installed.states[name] !== value) problems.push(`its state ${name} is not ${value}`);
  }
  for (const [name, shape] of Object.entries(REPLACED)) {
    const method = installed.prototype[name];
    if (typeof method !== 'function') {
      problems.push(`ConnectionManager.prototype.${name} is missing`);
      continue;
    }
    const source = method.toString();
    const missing = shape.uses.filter((word) => !source.includes(word));
    if (method.length !== shape.arity || missing.length > 0) {
      problems.push(`ConnectionManager.prototype.${name} changed shape`);
    }
  }
  return problems;
}

let checked: string[] | undefined;

/** Checks the installed client once per process; UnsupportedZooKeeperClientError if it differs. */
export function assertSupportedClient(): void {
  checked ??= clientProblems({
    version: installedVersion(),
    states: ConnectionManager.STATES,
    prototype: ConnectionManager.prototype,
  });
  if (checked.length > 0) throw new UnsupportedZooKeeperClientError(checked);
}

function installedVersion(): string {
  const file = require.resolve('node-zookeeper-client/package.json');
  return String(JSON.parse(readFileSync(file, 'utf8')).version);
}

/** What the session is told by, and decides for, one connection manager. */
export interface ConnectionHooks {
  /** Packets to write right behind the ConnectRequest of every new connection. */
  primeConnection(): Buffer[];
  /** A plain socket failed (the TLS variant reports its own failures). */
  socketFailed(err: Error): void;
  /** Frames arrived that answer one of our requests, not only watch notifications. */
  answered(): void;
  /** The client could not decode `frames` (an error code missing from its table). */
  undecodable(frames: Buffer): void;
  /** Whether a (re)connect attempt may start now; false stops reconnecting. */
  mayConnect(): boolean;
  /** Whether a socket may still be opened (a spin delay may have passed since mayConnect). */
  mayOpenSocket(): boolean;
  /** The connection manager reached CONNECTED. */
  socketConnected(): void;
  /** The socket closed and the client will not reconnect (closed, or the session expired). */
  socketClosedForGood(): void;
}

/**
 * Hooks into one client's connection manager (this instance, never the prototype):
 * - credentials go right behind the ConnectRequest on every new connection (the client's own
 *   addAuthInfo queues them behind requests queued meanwhile);
 * - every answer to a request of ours (a reply, a ping reply; not a watch notification) is told;
 * - a frame the client cannot parse (an error code missing from its table throws) drops the
 *   socket instead of crashing the process, and the session reconnects;
 * - reconnects are asked for (findNextServer is mirrored to keep its spin timer), and the end
 *   of the socket is told;
 * - request numbers wrap as Java's client's do (wrapXids).
 */
export function patchConnectionManager(cm: any, hooks: ConnectionHooks): void {
  assertSupportedClient();
  wrapXids(cm);
  const onConnected = cm.onSocketConnected;
  cm.onSocketConnected = () => {
    onConnected.call(cm);
    for (const packet of hooks.primeConnection()) cm.socket.write(packet);
  };
  const onError = cm.onSocketError;
  cm.onSocketError = (err: Error) => {
    hooks.socketFailed(err);
    onError.call(cm, err);
  };
  const onData = cm.onSocketData;
  cm.onSocketData = (chunk: Buffer) => walkFrames(cm, chunk, hooks, onData);
  const connect = cm.connect;
  cm.connect = () => {
    if (hooks.mayConnect()) connect.call(cm);
  };
  cm.findNextServer = (cb: (server: unknown) => void) => findNextServer(cm, hooks, cb);
  const onClosed = cm.onSocketClosed;
  cm.onSocketClosed = (hadError: boolean) => {
    onClosed.call(cm, hadError);
    if (cm.state === CM_STATES.CLOSED || cm.state === CM_STATES.SESSION_EXPIRED) {
      hooks.socketClosedForGood();
    }
  };
  const setState = cm.setState;
  cm.setState = (s: number) => {
    setState.call(cm, s);
    if (s === CM_STATES.CONNECTED) hooks.socketConnected();
  };
}

/**
 * The bytes of a frame not read whole yet, per socket: a frame belongs to the socket it came on,
 * so a new socket starts with none, and a reply cut by a dropped connection is never completed
 * with the next connection's bytes (docs/design.md "The connection layer").
 */
const partialFrames = new WeakMap<object, Buffer>();

/**
 * Hands the client one complete frame at a time, each a view of the bytes read (the client's
 * own onSocketData copies what follows a frame once per frame: O(n^2) bytes for n replies read
 * together). Only a partial frame at the end is kept, for the next read of the same socket.
 */
export function walkFrames(
  cm: any,
  chunk: Buffer,
  hooks: ConnectionHooks,
  onData: (frame: Buffer) => void,
): void {
  const socket = cm.socket;
  const partial = partialFrames.get(socket);
  const data: Buffer = partial ? Buffer.concat([partial, chunk]) : chunk;
  partialFrames.delete(socket);
  cm.pendingBuffer = null; // the client's own buffer outlives its sockets: never used
  if (answersRequest(data)) hooks.answered();
  let at = 0;
  while (data.length - at >= 4) {
    const end = at + 4 + data.readInt32BE(at);
    if (end < at + 4) return void socket?.destroy(); // a negative length: not ZooKeeper's
    if (end > data.length) break;
    const frame = data.subarray(at, end);
    at = end;
    try {
      if (!answerOurs(cm, frame)) onData.call(cm, frame);
    } catch {
      socket?.destroy();
      hooks.undecodable(frame);
      return;
    }
    // The client dropped the connection (a reply out of order): the rest belongs to no request.
    if (cm.socket !== socket || socket?.destroyed) return;
  }
  if (at < data.length && socket) partialFrames.set(socket, data.subarray(at));
}

/**
 * A reply to a request of ours that decodeReply reads, first in line: decoded here and handed to
 * its callback as the client's onSocketData would (the connection's last zxid noted; an error
 * code as the client's Exception, which throws for a code missing from its table). False for any
 * other frame (a notification, a ping, a reply the client decodes, one out of order), which the
 * client handles as before. Only while connected: the ConnectResponse comes before.
 */
function answerOurs(cm: any, frame: Buffer): boolean {
  if (cm.state !== CM_STATES.CONNECTED && cm.state !== CM_STATES.CONNECTED_READ_ONLY) return false;
  if (frame.length < REPLY_PAYLOAD_OFFSET) return false; // no whole ReplyHeader: the client's case
  const packet = cm.pendingQueue[0];
  const request = packet?.request;
  if (request?.ours !== true || request.header.xid !== frame.readInt32BE(4)) return false;
  // Off the queue first, as the client does: a reply that cannot be decoded (a code missing
  // from its table) throws with its request gone, which then ends by its deadline and tells the
  // code apart (request-errors.ts, noteUndecodable).
  cm.pendingQueue.shift();
  cm.zxid = Buffer.from(frame.subarray(8, 16));
  const err = frame.readInt32BE(16);
  if (err !== 0) packet.callback(Exception.create(err));
  else packet.callback(null, { payload: decodeReply(request.header.type, frame, chrootOf(cm)) });
  return true;
}

/**
 * The client's findNextServer, step by step (round robin; once every server was tried, a random
 * spin delay), with its timer kept so that ending the client clears it, and no socket opened once
 * the session may not open one.
 */
function findNextServer(cm: any, hooks: ConnectionHooks, cb: (server: unknown) => void): void {
  cm.nextServerIndex %= cm.servers.length;
  const next = (): void => {
    cm.spinTimer = undefined;
    const server = cm.servers[cm.nextServerIndex];
    cm.nextServerIndex += 1;
    if (hooks.mayOpenSocket()) cb(server);
  };
  if (cm.serverAttempts === cm.servers.length) {
    cm.spinTimer = setTimeout(() => {
      next();
      cm.serverAttempts = 0; // reset: we waited long enough
    }, Math.random() * cm.spinDelay);
  } else {
    cm.serverAttempts += 1;
    process.nextTick(next);
  }
}

/** The chroot of the connection string (fixed when the client is created), if any. */
export function chrootOf(cm: any): string | undefined {
  return cm.chrootPath || undefined;
}

/** Where a request frame's xid is: behind its int32 length (jute's RequestHeader comes first). */
const XID_OFFSET = 4;

/**
 * Queues a request of ours on the connection manager, in order with the client's own, as the
 * client's methods do (no retry wrapper: the engine retries itself), on a corked socket
 * (corkRequests). `frame` is the request as jute-requests.ts encoded it (its path under the chroot); its
 * xid is written in when the connection manager numbers the request, right before the write.
 * `done` gets the reply: an error, or a Response whose payload answerOurs decoded (create,
 * delete, getChildren2, getData: jute-replies.ts) or the client did (any other type).
 */
export function queueRequest(
  cm: any,
  type: number,
  frame: Buffer,
  done: (err: any, response: any) => void,
): void {
  corkRequests(cm);
  const header = { xid: 0, type };
  const toBuffer = (): Buffer => {
    frame.writeInt32BE(header.xid, XID_OFFSET);
    return frame;
  };
  // `ours`: its reply is decoded by answerOurs, not by the client.
  cm.queue({ header, payload: null, toBuffer, ours: decodesReplyOf(type) }, done);
}

/** Registers a watcher the way the client does once a request that set the watch succeeded. */
export function registerWatcher(
  cm: any,
  kind: 'data' | 'child' | 'existence',
  path: string,
  watcher: unknown,
): void {
  if (kind === 'data') cm.registerDataWatcher(path, watcher);
  else if (kind === 'child') cm.registerChildWatcher(path, watcher);
  else cm.registerExistenceWatcher(path, watcher);
}

/** The largest int32: no request is numbered with it, the next after 2^31-2 is 1 (see wrapXids). */
const MAX_XID = 0x7fffffff;

/**
 * Numbers requests as Java's client does (ClientCnxn.getXid): after 2^31-2 comes 1. The client's
 * counter (`header.xid = this.xid; this.xid += 1`) never wraps, and a session that sent about 2^31
 * requests (a day at 25k a second) would write xids jute cannot encode: every request would then
 * throw after it was queued. Negative xids are the server's own (-1 a notification, -2 a ping).
 */
function wrapXids(cm: any): void {
  let next: number = cm.xid;
  Object.defineProperty(cm, 'xid', {
    configurable: true,
    enumerable: true,
    get: () => next,
    set: (xid: number) => void (next = xid >= MAX_XID ? 1 : xid),
  });
}

/** @internal The connection manager numbers its next request `xid` (ZkSessionOptions.firstXid). */
export function startXidsAt(cm: any, xid: number): void {
  cm.xid = xid;
}

/** Whether the connection manager has a session's connection up right now. */
export function isConnected(cm: any): boolean {
  return cm.state === CM_STATES.CONNECTED;
}

/** Drops the current socket (the client reconnects, unless ending). */
export function dropSocket(cm: any): void {
  cm.socket?.destroy();
}

/**
 * Ends the client for good: no socket, no reconnect, and no connect timer of its own (a connect
 * attempt under way has one, which would keep a finished process alive and fire into it).
 */
export function endConnectionManager(cm: any): void {
  cm.state = CM_STATES.CLOSED;
  clearTimeout(cm.connectTimeoutHandler);
  clearTimeout(cm.spinTimer);
  cm.socket?.destroy();
}

/**
 * Requests issued together leave in one socket write (docs/design.md "The connection layer").
 * With no reply awaited the socket is uncorked at the end of the tick: a lone caller's create +
 * getChildren leave at once. With replies awaited (other callers on this session), at the end of
 * this turn of the event loop (setImmediate): callers that send from callbacks of their own
 * (a release after an I/O callback or an immediate) share the write, as Nagle's algorithm holds
 * small segments while unacknowledged data is out.
 */
export function corkRequests(cm: any): void {
  const socket = cm.socket;
  if (!socket || socket.writableCorked > 0 || socket.destroyed) return;
  socket.cork();
  if (cm.pendingQueue.length > 0) setImmediate(() => socket.uncork());
  else process.nextTick(() => socket.uncork());
}

/** xid of a watch notification: sent by the server on its own, it answers nothing of ours. */
const NOTIFICATION_XID = -1;

/**
 * Whether the complete frames at the start of `frames` include an answer to one of our requests
 * (int32 length, then int32 xid: a reply, a ping reply (-2), or the ConnectResponse, which
 * starts with a protocol version of 0), as opposed to watch notifications only: only an answer
 * proves the server hears us (docs/design.md 'What "holding" means, and when it ends').
 */
export function answersRequest(frames: Buffer): boolean {
  for (let at = 0; at + 8 <= frames.length;) {
    const length = frames.readInt32BE(at);
    if (length < 4 || at + 4 + length > frames.length) return false; // incomplete (or garbage)
    if (frames.readInt32BE(at + 4) !== NOTIFICATION_XID) return true;
    at += 4 + length;
  }
  return false;
}
