import { randomBytes } from 'node:crypto';
import { OP } from './jute-requests';
import { decodeReply, decodeReplyHeader } from './jute-replies';

// node-zookeeper-client's jute records (a test-only reference implementation): every reply is
// decoded by both and compared field by field.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const jute = require('node-zookeeper-client/lib/jute');

const STAT_FIELDS = [
  'czxid',
  'mzxid',
  'ctime',
  'mtime',
  'version',
  'cversion',
  'aversion',
  'ephemeralOwner',
  'dataLength',
  'numChildren',
  'pzxid',
] as const;
const LONGS = new Set(['czxid', 'mzxid', 'ctime', 'mtime', 'ephemeralOwner', 'pzxid']);

/** A reply frame as a server sends it: length, xid, zxid, err, then the payload's fields. */
function reply(xid: number, err: number, payload: Buffer[] = []): Buffer {
  const head = Buffer.alloc(20);
  const body = Buffer.concat(payload);
  head.writeInt32BE(16 + body.length, 0);
  head.writeInt32BE(xid, 4);
  randomBytes(8).copy(head, 8); // zxid
  head.writeInt32BE(err, 16);
  return Buffer.concat([head, body]);
}
const int = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const str = (s: string | null): Buffer =>
  s === null ? int(-1) : Buffer.concat([int(Buffer.byteLength(s)), Buffer.from(s)]);
const bytes = (b: Buffer | null): Buffer =>
  b === null ? int(-1) : Buffer.concat([int(b.length), b]);
const vector = (items: string[] | null): Buffer =>
  items === null ? int(-1) : Buffer.concat([int(items.length), ...items.map(str)]);
const stat = (): Buffer =>
  Buffer.concat(STAT_FIELDS.map((f) => (LONGS.has(f) ? randomBytes(8) : randomBytes(4))));

/** Field by field, as the engine reads them (a record's methods and schema left out). */
function fields(payload: any): unknown {
  if (payload === null || payload === undefined) return payload;
  const out: Record<string, unknown> = {};
  for (const key of ['path', 'children', 'data']) if (key in payload) out[key] = payload[key];
  if (payload.stat) out.stat = Object.fromEntries(STAT_FIELDS.map((f) => [f, payload.stat[f]]));
  return out;
}

/** The reference's decoding of the reply to request `type` (its record for that type). */
function theirs(type: number, frame: Buffer, chroot?: string): unknown {
  const record = {
    [OP.CREATE]: 'CreateResponse',
    [OP.GET_CHILDREN2]: 'GetChildren2Response',
    [OP.GET_DATA]: 'GetDataResponse',
    [OP.EXISTS]: 'ExistsResponse',
    [OP.SET_DATA]: 'SetDataResponse',
  }[type];
  if (!record) return null;
  const payload = new jute.protocol[record]();
  if (chroot) payload.setChrootPath(chroot);
  payload.deserialize(frame, 20);
  return fields(payload);
}

const expectSame = (type: number, frame: Buffer, chroot?: string): void => {
  expect(fields(decodeReply(type, frame, chroot))).toEqual(theirs(type, frame, chroot));
};

const NAMES = ['_c_1b2c-lock-0000000007', 'ünïcödé ✓', '', 'x'.repeat(300)];
const CHROOTS = [undefined, '/chroot/app'];

describe('our reply decoding, reply for reply against a reference jute implementation', () => {
  it.each(CHROOTS)('createContainer (chroot %s): the path of its create2 reply', (chroot) => {
    // The client has no create2: its reply is a create's path followed by a Stat.
    for (const path of ['/locks/order:42', '/']) {
      const sent = chroot ? (path === '/' ? chroot : chroot + path) : path;
      const frame = reply(7, 0, [str(sent), stat()]);
      expect(decodeReply(OP.CREATE_CONTAINER, frame, chroot)).toEqual({ path });
      expect(decodeReply(OP.CREATE_CONTAINER, frame, chroot)).toEqual(
        decodeReply(OP.CREATE, reply(7, 0, [str(sent)]), chroot),
      );
    }
  });

  it.each(CHROOTS)('create (chroot %s): the path, under the chroot or not, or none', (chroot) => {
    const paths = ['/locks/order:42/_c_1-lock-0000000001', '/', '/ünï/x'];
    const sent = paths.map((p) => (chroot ? (p === '/' ? chroot : chroot + p) : p));
    for (const path of chroot ? sent : [...sent, null]) {
      expectSame(OP.CREATE, reply(7, 0, [str(path)]), chroot);
    }
  });

  it('delete: no payload', () => {
    expect(decodeReply(OP.DELETE, reply(7, 0))).toBeNull();
  });

  it.each(CHROOTS)(
    'getChildren2 (chroot %s): every listing, null and empty too, and its Stat',
    (chroot) => {
      for (const children of [[], ['a'], NAMES, null]) {
        expectSame(OP.GET_CHILDREN2, reply(7, 0, [vector(children), stat()]), chroot);
      }
    },
  );

  it('getData: data null, empty and some, and its Stat', () => {
    for (const data of [null, Buffer.alloc(0), Buffer.from('{"pid":1} ✓'), randomBytes(5000)]) {
      expectSame(OP.GET_DATA, reply(7, 0, [bytes(data), stat()]));
    }
  });

  it('getACL: the ACL and its Stat', () => {
    const acl = [
      { permission: 31, id: { scheme: 'world', id: 'anyone' } },
      { permission: 1, id: { scheme: 'digest', id: 'u:hash' } },
    ];
    const entries = acl.map((a) =>
      Buffer.concat([int(a.permission), str(a.id.scheme), str(a.id.id)]),
    );
    const frame = reply(7, 0, [int(acl.length), ...entries, stat()]);
    expect(decodeReply(OP.GET_ACL, frame)).toEqual({ acl, stat: expect.any(Object) });
  });

  it('exists and setData: the Stat', () => {
    expectSame(OP.EXISTS, reply(7, 0, [stat()]));
    expectSame(OP.SET_DATA, reply(7, 0, [stat()]));
  });

  it('the ReplyHeader: xid, zxid, any error code', () => {
    for (const code of [0, -101, -125, -127, -9999]) {
      const frame = reply(7, code);
      expect(decodeReplyHeader(frame)).toEqual({ xid: 7, zxid: frame.subarray(8, 16), err: code });
    }
  });

  it('a reply cut short throws RangeError (the wire then drops the connection)', () => {
    const full = reply(7, 0, [vector(['a', 'b']), stat()]);
    for (let end = 20; end < full.length; end++) {
      const cut = Buffer.from(full.subarray(0, end));
      cut.writeInt32BE(end - 4, 0);
      expect(() => decodeReply(OP.GET_CHILDREN2, cut), `cut at ${end}`).toThrow(RangeError);
    }
    expect(() => decodeReplyHeader(reply(7, 0).subarray(0, 19))).toThrow(RangeError);
  });

  it('keeps no view of the frame (the receive buffer is reused): a long or data is a copy', () => {
    const frame = reply(7, 0, [bytes(Buffer.from('abc')), stat()]);
    const payload = decodeReply(OP.GET_DATA, frame);
    const before = JSON.stringify(payload);
    frame.fill(0xee, 8);
    expect(JSON.stringify(payload)).toBe(before);
  });
});
