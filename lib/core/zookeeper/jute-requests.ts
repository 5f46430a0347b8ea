/** Owns our jute encoding of the requests the engine sends: one Buffer each, no records. */

/** ZooKeeper's op codes (org.apache.zookeeper.ZooDefs.OpCode) of the requests encoded here. */
export const OP = {
  CREATE: 1,
  DELETE: 2,
  EXISTS: 3,
  GET_DATA: 4,
  SET_DATA: 5,
  CHECK: 13,
  GET_CHILDREN2: 12,
  MULTI: 14,
  /** create with a CONTAINER node's flag; its reply is create2's (path, Stat). */
  CREATE_CONTAINER: 19,
} as const;

/**
 * The longest request the library sends, in bytes after the frame's int32 length: the default
 * `jute.maxbuffer` of ZooKeeper servers (0xfffff). A server drops the connection on reading a
 * longer request, and the client would send it again on every reconnect, so every frame built
 * here is checked against it before it is queued (SessionRequests). Operators who lower
 * `jute.maxbuffer` must keep what the locks carry below theirs (docs/reference/options.md
 * "Size limits").
 */
export const MAX_REQUEST_BYTES = 0xfffff;

/**
 * The create flag of a CONTAINER node (ZooKeeper 3.5+, org.apache.zookeeper.CreateMode): the
 * server deletes it once it has had a child and is empty again (docs/design.md "Cleanup").
 * Sent with OP.CREATE_CONTAINER, as the Java client does.
 */
export const CONTAINER = 4;

/** An ACL entry as node-zookeeper-client's ACL objects carry it. */
export interface AclEntry {
  permission: number;
  id: { scheme: string; id: string };
}

/** One operation of a multi (ZooKeeper's transaction). */
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
const aclSize = (acl: readonly AclEntry[]): number =>
  acl.reduce((size, a) => size + 4 + stringSize(a.id.scheme) + stringSize(a.id.id), 4);

/** Writes jute fields one after the other into a frame sized in advance. */
class Frame {
  readonly buffer: Buffer;
  private at = 0;

  /** A frame for a request of `bodySize` bytes: length, then the header (xid, type). */
  constructor(bodySize: number, xid: number, type: number) {
    this.buffer = Buffer.allocUnsafe(4 + 8 + bodySize);
    this.int(8 + bodySize)
      .int(xid)
      .int(type);
  }

  int(value: number): this {
    this.buffer.writeInt32BE(value, this.at);
    this.at += 4;
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

/** create, or createContainer for the CONTAINER flag: the same CreateRequest body. */
export function encodeCreate(
  xid: number,
  path: string,
  data: Buffer | null,
  acl: readonly AclEntry[],
  flags: number,
): Buffer {
  const size = stringSize(path) + bufferSize(data) + aclSize(acl) + 4;
  const frame = new Frame(size, xid, createOpOf(flags));
  return frame.string(path).bytes(data).acl(acl).int(flags).buffer;
}

export function encodeDelete(xid: number, path: string, version: number): Buffer {
  return new Frame(stringSize(path) + 4, xid, OP.DELETE).string(path).int(version).buffer;
}

/** getChildren2, getData and exists: a path and whether to leave a watch. */
export function encodePathWatch(
  xid: number,
  type: typeof OP.GET_CHILDREN2 | typeof OP.GET_DATA | typeof OP.EXISTS,
  path: string,
  watch: boolean,
): Buffer {
  return new Frame(stringSize(path) + 1, xid, type).string(path).bool(watch).buffer;
}

/** A multi: each op behind a MultiHeader (type, done false, err -1), then the closing header. */
export function encodeMulti(xid: number, ops: readonly MultiOp[]): Buffer {
  let size = 9;
  for (const op of ops) size += 9 + opSize(op);
  const frame = new Frame(size, xid, OP.MULTI);
  for (const op of ops) {
    frame.int(op.type).bool(false).int(-1).string(op.path);
    if (op.type === OP.CREATE) frame.bytes(op.data).acl(op.acl).int(op.flags);
    else if (op.type === OP.SET_DATA) frame.bytes(op.data).int(op.version);
    else frame.int(op.version);
  }
  return frame.int(-1).bool(true).int(-1).buffer;
}

function opSize(op: MultiOp): number {
  const path = stringSize(op.path);
  if (op.type === OP.CREATE) return path + bufferSize(op.data) + aclSize(op.acl) + 4;
  if (op.type === OP.SET_DATA) return path + bufferSize(op.data) + 4;
  return path + 4;
}
