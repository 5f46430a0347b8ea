/** Owns our jute encoding of every frame written and decoding of every frame read; no records. */
import type { AclEntry, Stat } from './zk-client';

/** ZooKeeper's op codes (org.apache.zookeeper.ZooDefs.OpCode) of the requests encoded here. */
export const OP = {
  CREATE: 1,
  DELETE: 2,
  EXISTS: 3,
  GET_DATA: 4,
  SET_DATA: 5,
  PING: 11,
  CHECK: 13,
  GET_CHILDREN2: 12,
  MULTI: 14,
  /** Only as the type of a multi's result: a container's create (path, Stat). */
  CREATE2: 15,
  /** create with a CONTAINER node's flag; its reply is create2's (path, Stat). */
  CREATE_CONTAINER: 19,
  GET_ACL: 6,
  AUTH: 100,
  SET_WATCHES: 101,
  CLOSE_SESSION: -11,
} as const;

/**
 * The longest request sent (bytes after the length): the servers' default `jute.maxbuffer`, past
 * which a server drops the connection on every resend (docs/reference/options.md "Size limits").
 */
export const MAX_REQUEST_BYTES = 0xfffff;

/**
 * The create flag of a CONTAINER node (ZooKeeper 3.5+): the server deletes it once it has had a
 * child and is empty again. Sent with OP.CREATE_CONTAINER, as the Java client does.
 */
export const CONTAINER = 4;

/** The xids ZooKeeper reserves (ClientCnxn): frames that answer no numbered request. */
export const XID = {
  NOTIFICATION: -1,
  PING: -2,
  AUTH: -4,
  SET_WATCHES: -8,
} as const;

/** Where a request frame's xid is: behind its int32 length (the RequestHeader comes first). */
export const XID_OFFSET = 4;

/** Where a request frame's op type is: right behind its xid. */
export const TYPE_OFFSET = XID_OFFSET + 4;

/** One op of a multi (ZooKeeper's transaction); a create is sent as its flags say (createOpOf). */
export type MultiOp =
  | {
      type: typeof OP.CREATE;
      path: string;
      data: Buffer | null;
      acl: readonly AclEntry[];
      flags: number;
    }
  | { type: typeof OP.DELETE; path: string; version: number }
  | { type: typeof OP.SET_DATA; path: string; data: Buffer | null; version: number }
  | { type: typeof OP.CHECK; path: string; version: number };

const stringSize = (value: string): number => 4 + Buffer.byteLength(value);
const bufferSize = (value: Buffer | null): number => 4 + (value ? value.length : 0);
function aclSize(acl: readonly AclEntry[]): number {
  let size = 4;
  for (const a of acl) size += 12 + Buffer.byteLength(a.id.scheme) + Buffer.byteLength(a.id.id);
  return size;
}

/**
 * Writes jute fields one after the other into a frame sized in advance (Buffer's writes return the
 * next offset); a scalar field is one method, a list or an ACL builds on them.
 */
class Frame {
  readonly buffer: Buffer;
  private at = 0;

  /** A frame for a `bodySize` request: length, header (xid, type); no type: no header (connect). */
  constructor(bodySize: number, xid: number, type?: number) {
    const headerSize = type === undefined ? 0 : 8;
    this.buffer = Buffer.allocUnsafe(4 + headerSize + bodySize);
    this.int(headerSize + bodySize);
    if (type !== undefined) this.int(xid).int(type);
  }

  /** A long given as its 8 big-endian bytes. */
  long(value: Buffer): this {
    this.at += value.copy(this.buffer, this.at, 0, 8);
    return this;
  }

  strings(values: readonly string[]): this {
    this.int(values.length);
    for (const value of values) this.string(value);
    return this;
  }

  int(value: number): this {
    this.at = this.buffer.writeInt32BE(value, this.at);
    return this;
  }

  bool(value: boolean): this {
    this.buffer[this.at++] = value ? 1 : 0;
    return this;
  }

  string(value: string): this {
    const length = this.buffer.write(value, this.at + 4, 'utf8');
    this.int(length);
    this.at += length;
    return this;
  }

  bytes(value: Buffer | null): this {
    if (!value) return this.int(-1);
    this.int(value.length);
    this.at += value.copy(this.buffer, this.at);
    return this;
  }

  acl(acl: readonly AclEntry[]): this {
    this.int(acl.length);
    for (const a of acl) this.int(a.permission).string(a.id.scheme).string(a.id.id);
    return this;
  }
}

/** The op a create with `flags` is sent as: a CONTAINER flag needs its own (createContainer). */
export function createOpOf(flags: number): typeof OP.CREATE | typeof OP.CREATE_CONTAINER {
  return flags === CONTAINER ? OP.CREATE_CONTAINER : OP.CREATE;
}

// Each request's encoder builds its whole frame, `path` sent under `chroot` (if any).

/** create, or createContainer for the CONTAINER flag: the same CreateRequest body. */
export function encodeCreate(
  xid: number,
  path: string,
  data: Buffer | null,
  acl: readonly AclEntry[],
  flags: number,
  chroot?: string,
): Buffer {
  const sent = withChroot(path, chroot);
  const size = stringSize(sent) + bufferSize(data) + aclSize(acl) + 4;
  const frame = new Frame(size, xid, createOpOf(flags));
  return frame.string(sent).bytes(data).acl(acl).int(flags).buffer;
}

export function encodeDelete(xid: number, path: string, version: number, chroot?: string): Buffer {
  const sent = withChroot(path, chroot);
  return new Frame(stringSize(sent) + 4, xid, OP.DELETE).string(sent).int(version).buffer;
}

/** getChildren2, getData and exists: a path and whether to leave a watch. */
export function encodePathWatch(
  xid: number,
  type: typeof OP.GET_CHILDREN2 | typeof OP.GET_DATA | typeof OP.EXISTS,
  path: string,
  watch: boolean,
  chroot?: string,
): Buffer {
  const sent = withChroot(path, chroot);
  return new Frame(stringSize(sent) + 1, xid, type).string(sent).bool(watch).buffer;
}

/**
 * A multi: each op behind a MultiHeader (type, done false, err -1), then the closing header; its
 * paths sent under `chroot`.
 */
export function encodeMulti(xid: number, ops: readonly MultiOp[], chroot?: string): Buffer {
  let size = 9;
  for (const op of ops) size += 9 + opSize(op, withChroot(op.path, chroot));
  const frame = new Frame(size, xid, OP.MULTI);
  for (const op of ops) {
    const type = op.type === OP.CREATE ? createOpOf(op.flags) : op.type;
    frame.int(type).bool(false).int(-1).string(withChroot(op.path, chroot));
    if (op.type === OP.CREATE) frame.bytes(op.data).acl(op.acl).int(op.flags);
    else if (op.type === OP.SET_DATA) frame.bytes(op.data).int(op.version);
    else frame.int(op.version);
  }
  return frame.int(-1).bool(true).int(-1).buffer;
}

function opSize(op: MultiOp, path: string): number {
  const size = stringSize(path);
  if (op.type === OP.CREATE) return size + bufferSize(op.data) + aclSize(op.acl) + 4;
  if (op.type === OP.SET_DATA) return size + bufferSize(op.data) + 4;
  return size + 4;
}

export function encodeSetData(
  xid: number,
  path: string,
  data: Buffer,
  version: number,
  chroot?: string,
): Buffer {
  const sent = withChroot(path, chroot);
  const size = stringSize(sent) + bufferSize(data) + 4;
  return new Frame(size, xid, OP.SET_DATA).string(sent).bytes(data).int(version).buffer;
}

/** A request with a header and no body (ping, closeSession). */
export function encodeHeaderOnly(xid: number, type: number): Buffer {
  return new Frame(0, xid, type).buffer;
}

/** What a ConnectRequest carries: the last zxid seen, the timeout asked, the session to resume. */
export interface ConnectRequest {
  lastZxidSeen: Buffer;
  timeoutMs: number;
  sessionId: Buffer;
  password: Buffer;
}

/** The ConnectRequest (no RequestHeader); readOnly false: a read-only session cannot write. */
export function encodeConnect(request: ConnectRequest): Buffer {
  const size = 4 + 8 + 4 + 8 + bufferSize(request.password) + 1;
  return new Frame(size, 0)
    .int(0)
    .long(request.lastZxidSeen)
    .int(request.timeoutMs)
    .long(request.sessionId)
    .bytes(request.password)
    .bool(false).buffer;
}

/** An AuthPacket (xid -4): type 0, scheme, the credentials' bytes. */
export function encodeAuth(scheme: string, auth: Buffer): Buffer {
  const size = 4 + stringSize(scheme) + bufferSize(auth);
  return new Frame(size, XID.AUTH, OP.AUTH).int(0).string(scheme).bytes(auth).buffer;
}

/** The watches a SetWatches frame re-registers, by path. */
export interface WatchPaths {
  data: readonly string[];
  exist: readonly string[];
  child: readonly string[];
}

/**
 * SetWatches frames (xid -8) re-registering `watches` (sent under `chroot`) from `relativeZxid`,
 * each at most `maxBytes` of paths (the Java client's 128 KB), so many watches never make a frame
 * the server refuses.
 */
export function encodeSetWatches(
  relativeZxid: Buffer,
  watches: WatchPaths,
  chroot: string | undefined,
  maxBytes = 128 * 1024,
): Buffer[] {
  const frames: Buffer[] = [];
  const kinds = ['data', 'exist', 'child'] as const;
  let batch: Record<(typeof kinds)[number], string[]> = { data: [], exist: [], child: [] };
  let bytes = 0;
  const flush = (): void => {
    const size =
      8 + kinds.reduce((n, k) => n + 4 + batch[k].reduce((m, p) => m + stringSize(p), 0), 0);
    const frame = new Frame(size, XID.SET_WATCHES, OP.SET_WATCHES).long(relativeZxid);
    for (const kind of kinds) frame.strings(batch[kind]);
    frames.push(frame.buffer);
    batch = { data: [], exist: [], child: [] };
    bytes = 0;
  };
  for (const kind of kinds) {
    for (const path of watches[kind]) {
      const sent = withChroot(path, chroot);
      if (bytes > 0 && bytes + stringSize(sent) > maxBytes) flush();
      batch[kind].push(sent);
      bytes += stringSize(sent);
    }
  }
  if (bytes > 0) flush();
  return frames;
}

export function encodeGetAcl(xid: number, path: string, chroot?: string): Buffer {
  const sent = withChroot(path, chroot);
  return new Frame(stringSize(sent), xid, OP.GET_ACL).string(sent).buffer;
}

/** A reply's payload by ZooKeeper's field names (a long as 8 bytes, null as undefined). */
export type ReplyPayload =
  | null
  | { path: string | undefined }
  | { paths: string[] }
  | { failed: number }
  | { stat: FullStat }
  | { acl: AclEntry[]; stat: FullStat }
  | { children: string[] | undefined; stat: FullStat }
  | { data: Buffer | undefined; stat: FullStat };

/** Every field of ZooKeeper's Stat, as the client decodes it. */
export interface FullStat extends Stat {
  ctime: Buffer;
  mtime: Buffer;
  aversion: number;
  dataLength: number;
  pzxid: Buffer;
}

/** Where a reply's payload starts: length, then the ReplyHeader (xid, zxid, err). */
const REPLY_PAYLOAD_OFFSET = 4 + 4 + 8 + 4;

/** A reply frame: its ReplyHeader (the xid it answers, the zxid, the error code), then payload. */
export interface Reply {
  xid: number;
  zxid: Buffer;
  err: number;
  /** Whether it answers `request` (its xid is the request's). */
  answers: boolean;
  /** The payload if it answers `request` without error, else null; undefined: unreadable. */
  payload: ReplyPayload | undefined;
}

/** A reply `frame`'s header (RangeError if too short) and, if it answers `request`, its payload. */
export function decodeReplyFrame(
  frame: Buffer,
  request?: { type: number; frame: Buffer },
  chroot?: string,
): Reply {
  if (frame.length < REPLY_PAYLOAD_OFFSET) throw new RangeError('frame ends inside its header');
  const xid = frame.readInt32BE(4);
  let err = frame.readInt32BE(16);
  const answers = request !== undefined && request.frame.readInt32BE(XID_OFFSET) === xid;
  let payload: ReplyPayload | undefined = null;
  if (err === 0 && answers) {
    try {
      payload = decodeReply(request.type, frame, chroot);
    } catch {
      payload = undefined;
    }
  }
  if (payload && 'failed' in payload) {
    err = payload.failed; // a failed multi: its failing op's code is the reply's
    payload = null;
  }
  return { xid, zxid: frame.subarray(8, 16), err, answers, payload };
}

/**
 * The payload of a successful reply to request `type`, paths without the `chroot`. RangeError
 * when the frame ends before its payload does.
 */
export function decodeReply(type: number, frame: Buffer, chroot?: string): ReplyPayload {
  const reader = new Reader(frame, REPLY_PAYLOAD_OFFSET);
  switch (type) {
    case OP.CREATE:
    case OP.CREATE_CONTAINER: // create2's reply: the path, then a Stat the engine does not read
      return { path: withoutChroot(reader.string(), chroot) };
    case OP.GET_CHILDREN2: {
      const children = reader.strings();
      return { children, stat: reader.stat() };
    }
    case OP.GET_DATA: {
      const data = reader.bytes();
      return { data, stat: reader.stat() };
    }
    case OP.GET_ACL: {
      const acl = reader.acls();
      return { acl, stat: reader.stat() };
    }
    case OP.EXISTS:
    case OP.SET_DATA:
      return { stat: reader.stat() };
    case OP.MULTI:
      return multiResults(reader, chroot);
    default:
      return null; // delete, closeSession, setWatches: no payload
  }
}

/** ZooKeeper's RUNTIMEINCONSISTENCY: the code of a failed multi's ops after the failing one. */
const RUNTIME_INCONSISTENCY = -2;

/**
 * A MultiResponse: each result behind a MultiHeader (its type, done, err) until the closing one.
 * The created paths in op order, or the failing op's code (a failed multi's ReplyHeader says 0).
 */
function multiResults(reader: Reader, chroot?: string): { paths: string[] } | { failed: number } {
  const paths: string[] = [];
  let failed = 0;
  for (;;) {
    const type = reader.int();
    const done = reader.bool();
    const err = reader.int();
    if (done) return failed === 0 ? { paths } : { failed };
    if (type === OP.CREATE || type === OP.CREATE2) {
      paths.push(withoutChroot(reader.string(), chroot) ?? '');
      if (type === OP.CREATE2) reader.stat();
    } else if (type === OP.SET_DATA) reader.stat();
    else if (type === -1) {
      reader.int(); // the ErrorResponse: err again
      if (failed === 0 && err !== RUNTIME_INCONSISTENCY) failed = err;
    }
  }
}

/** The ConnectResponse: the session granted (timeout 0: the session asked for is expired). */
export interface ConnectResponse {
  protocolVersion: number;
  timeoutMs: number;
  sessionId: Buffer;
  password: Buffer;
  readOnly: boolean;
}

/**
 * The handshake's answer, from its whole frame; no readOnly byte (before 3.4) reads as false.
 * RangeError when the frame ends inside a field.
 */
export function decodeConnectResponse(frame: Buffer): ConnectResponse {
  const reader = new Reader(frame, 4);
  const protocolVersion = reader.int();
  const timeoutMs = reader.int();
  const sessionId = reader.long();
  const password = reader.bytes() ?? Buffer.alloc(0);
  const readOnly = reader.remaining() > 0 ? reader.bool() : false;
  return { protocolVersion, timeoutMs, sessionId, password, readOnly };
}

/** ZooKeeper's watch event types (Watcher.Event.EventType), by name. */
export const EVENT_NAMES: Readonly<Record<number, string>> = {
  [-1]: 'NONE',
  1: 'NODE_CREATED',
  2: 'NODE_DELETED',
  3: 'NODE_DATA_CHANGED',
  4: 'NODE_CHILDREN_CHANGED',
  5: 'DATA_WATCH_REMOVED',
  6: 'CHILD_WATCH_REMOVED',
  7: 'PERSISTENT_WATCH_REMOVED',
};

/** A notification's WatcherEvent (after its ReplyHeader): type, keeper state, path. */
export interface Notification {
  type: number;
  state: number;
  path: string;
}

/** The WatcherEvent of a notification frame, its path without the chroot. */
export function decodeNotification(frame: Buffer, chroot?: string): Notification {
  const reader = new Reader(frame, REPLY_PAYLOAD_OFFSET);
  const type = reader.int();
  const state = reader.int();
  const path = withoutChroot(reader.string(), chroot) ?? '';
  return { type, state, path };
}

/** `path` as sent: under the connection's chroot, if any (the chroot's own node for '/'). */
function withChroot(path: string, chroot: string | undefined): string {
  return !chroot ? path : path === '/' ? chroot : chroot + path;
}

function withoutChroot(path: string | undefined, chroot: string | undefined): string | undefined {
  if (!chroot || path === undefined) return path;
  if (path === chroot) return '/';
  return path.startsWith(chroot + '/') ? path.substring(chroot.length) : path;
}

/** The bytes of a Stat: four longs, three ints, a long, two ints, a long. */
const STAT_BYTES = 68;

/**
 * Reads jute fields one after the other (a scalar field one method, a list or an ACL building on
 * them); a field past the frame's end throws RangeError.
 */
class Reader {
  constructor(
    private readonly frame: Buffer,
    private at: number,
  ) {}

  int(): number {
    const value = this.frame.readInt32BE(this.at);
    this.at += 4;
    return value;
  }

  bool(): boolean {
    if (this.at >= this.frame.length) throw new RangeError('reply ends inside a bool');
    return this.frame[this.at++] !== 0;
  }

  remaining(): number {
    return this.frame.length - this.at;
  }

  long(): Buffer {
    const end = this.at + 8;
    if (end > this.frame.length) throw new RangeError('reply ends inside a long');
    const value = Buffer.from(this.frame.subarray(this.at, end)); // a copy: the frame is reused
    this.at = end;
    return value;
  }

  string(): string | undefined {
    const length = this.int();
    if (length === -1) return undefined;
    const start = this.at;
    this.at = this.end(length);
    return this.frame.toString('utf8', start, this.at);
  }

  strings(): string[] | undefined {
    const count = this.int();
    if (count === -1) return undefined;
    if (count < 0 || count * 4 > this.remaining())
      throw new RangeError('reply ends inside a vector');
    const values: string[] = [];
    for (let i = 0; i < count; i++) values.push(this.string() as string);
    return values;
  }

  acls(): AclEntry[] {
    const count = this.int();
    if (count < 0 || count * 12 > this.remaining())
      throw new RangeError('reply ends inside a vector');
    const acl: AclEntry[] = [];
    for (let i = 0; i < count; i++) {
      const permission = this.int();
      const scheme = this.string() ?? '';
      acl.push({ permission, id: { scheme, id: this.string() ?? '' } });
    }
    return acl;
  }

  bytes(): Buffer | undefined {
    const length = this.int();
    if (length === -1) return undefined;
    const start = this.at;
    this.at = this.end(length);
    return Buffer.from(this.frame.subarray(start, this.at)); // a copy: the frame is reused
  }

  /** A Stat, field by field at its offsets; its longs are views of one copy of its bytes. */
  stat(): FullStat {
    const end = this.at + STAT_BYTES;
    if (end > this.frame.length) throw new RangeError('reply ends inside a Stat');
    const s = Buffer.from(this.frame.subarray(this.at, end)); // a copy: the frame is reused
    this.at = end;
    return {
      czxid: s.subarray(0, 8),
      mzxid: s.subarray(8, 16),
      ctime: s.subarray(16, 24),
      mtime: s.subarray(24, 32),
      version: s.readInt32BE(32),
      cversion: s.readInt32BE(36),
      aversion: s.readInt32BE(40),
      ephemeralOwner: s.subarray(44, 52),
      dataLength: s.readInt32BE(52),
      numChildren: s.readInt32BE(56),
      pzxid: s.subarray(60, 68),
    };
  }

  /** Where a field of `length` bytes from here ends; RangeError past the frame's end. */
  private end(length: number): number {
    const end = this.at + length;
    if (length < 0 || end > this.frame.length) throw new RangeError('reply ends inside a field');
    return end;
  }
}
