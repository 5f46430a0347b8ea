/** Owns our jute decoding of every frame a server sends: handshake, replies, notifications. */
import { type AclEntry, OP } from './jute-requests';
import type { Stat } from './zk-client';

/**
 * A reply's payload (ZooKeeper's field names; a long as an 8-byte Buffer of its own; a null
 * string, buffer or vector as undefined), read straight from the frame: no record objects.
 */
export type ReplyPayload =
  | null
  | { path: string | undefined }
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
export const REPLY_PAYLOAD_OFFSET = 4 + 4 + 8 + 4;

/** A reply frame's ReplyHeader: the xid it answers, the zxid, the error code. */
export interface ReplyHeader {
  xid: number;
  zxid: Buffer;
  err: number;
}

/** The ReplyHeader of a complete `frame`; RangeError if the frame is too short for one. */
export function decodeReplyHeader(frame: Buffer): ReplyHeader {
  if (frame.length < REPLY_PAYLOAD_OFFSET) throw new RangeError('frame ends inside its header');
  return { xid: frame.readInt32BE(4), zxid: frame.subarray(8, 16), err: frame.readInt32BE(16) };
}

/**
 * The payload of a successful reply to request `type`, from the complete `frame`. A path the
 * server sends under the connection's `chroot` is given without it. RangeError when the frame
 * ends before its payload does.
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
    default:
      return null; // delete, closeSession, setWatches: no payload
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
 * The handshake's answer, from its own complete frame (length included). Servers before 3.4
 * send no readOnly byte: read as false. RangeError when the frame ends inside a field.
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

function withoutChroot(path: string | undefined, chroot: string | undefined): string | undefined {
  if (!chroot || path === undefined) return path;
  if (path === chroot) return '/';
  return path.startsWith(chroot + '/') ? path.substring(chroot.length) : path;
}

/** Reads jute fields one after the other; a field past the frame's end throws RangeError. */
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
    const end = this.end(length);
    const value = this.frame.toString('utf8', this.at, end);
    this.at = end;
    return value;
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
    const end = this.end(length);
    const value = Buffer.from(this.frame.subarray(this.at, end));
    this.at = end;
    return value;
  }

  stat(): FullStat {
    return {
      czxid: this.long(),
      mzxid: this.long(),
      ctime: this.long(),
      mtime: this.long(),
      version: this.int(),
      cversion: this.int(),
      aversion: this.int(),
      ephemeralOwner: this.long(),
      dataLength: this.int(),
      numChildren: this.int(),
      pzxid: this.long(),
    };
  }

  private end(length: number): number {
    const end = this.at + length;
    if (length < 0 || end > this.frame.length) throw new RangeError('reply ends inside a field');
    return end;
  }
}
