/** Owns our jute decoding of the replies to the requests jute-requests.ts encodes. */
import { OP } from './jute-requests';
import type { Stat } from './zk-client';

/**
 * A reply's payload as node-zookeeper-client 1.1.3 decodes it for the same request (its field
 * names; a long as an 8-byte Buffer of its own; a null string, buffer or vector as undefined),
 * read straight from the frame: no record objects, no schema walk (issue #24 §2).
 */
export type ReplyPayload =
  | null
  | { path: string | undefined }
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

/** The request types whose replies decodeReply reads; any other is left to the client. */
export function decodesReplyOf(type: number): boolean {
  return (
    type === OP.CREATE ||
    type === OP.CREATE_CONTAINER ||
    type === OP.DELETE ||
    type === OP.GET_CHILDREN2 ||
    type === OP.GET_DATA
  );
}

/** Where a reply's payload starts: length, then the ReplyHeader (xid, zxid, err). */
export const REPLY_PAYLOAD_OFFSET = 4 + 4 + 8 + 4;

/**
 * The payload of a successful reply to request `type` (one decodesReplyOf takes), from the
 * complete `frame`. A path the server sends under the connection's `chroot` is given without it.
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
    default:
      return null; // DELETE: no payload
  }
}

function withoutChroot(path: string | undefined, chroot: string | undefined): string | undefined {
  if (!chroot || path === undefined) return path;
  return path === chroot ? '/' : path.substring(chroot.length);
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
    const values: string[] = [];
    for (let i = 0; i < count; i++) values.push(this.string() as string);
    return values;
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
