import { randomBytes } from 'node:crypto';
import { OP } from './jute-requests';
import { decodeReply, decodeReplyHeader } from './jute-replies';

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
/** A Stat as it goes on the wire (its 11 fields, 68 bytes), and as a reference jute decodes it. */
const STAT = Buffer.from(
  '0b30557a9fc4e90e33587da2c7ec11365b80a5caef14395e83a8cdf2173c6186abd0f51a3f6489aed3f81d42678c' +
    'b1d6fb20456a8fb4d9fe23486d92b7dc01264b7095ba',
  'hex',
);
const long = (value: string): Buffer => Buffer.from(value, 'hex');
const STAT_DECODED = {
  czxid: long('0b30557a9fc4e90e'),
  mzxid: long('33587da2c7ec1136'),
  ctime: long('5b80a5caef14395e'),
  mtime: long('83a8cdf2173c6186'),
  version: -1412369126,
  cversion: 1063553454,
  aversion: -738714302,
  ephemeralOwner: long('678cb1d6fb20456a'),
  dataLength: -1883973122,
  numChildren: 591949202,
  pzxid: long('b7dc01264b7095ba'),
};

/** Field by field, as the engine reads them (a record's methods and schema left out). */
function fields(payload: any): unknown {
  if (payload === null || payload === undefined) return payload;
  const out: Record<string, unknown> = {};
  for (const key of ['path', 'children', 'data']) if (key in payload) out[key] = payload[key];
  if (payload.stat) out.stat = Object.fromEntries(STAT_FIELDS.map((f) => [f, payload.stat[f]]));
  return out;
}

/** Our decoding of `frame` equals what a reference jute implementation decoded from it. */
const expectDecoded = (type: number, frame: Buffer, expected: unknown, chroot?: string): void => {
  expect(fields(decodeReply(type, frame, chroot))).toEqual(expected);
};

const NAMES = ['_c_1b2c-lock-0000000007', 'ünïcödé ✓', '', 'x'.repeat(300)];
const CHROOTS = [undefined, '/chroot/app'];

describe('our reply decoding, reply for reply against what a reference jute implementation decoded', () => {
  it.each(CHROOTS)('createContainer (chroot %s): the path of its create2 reply', (chroot) => {
    // The client has no create2: its reply is a create's path followed by a Stat.
    for (const path of ['/locks/order:42', '/']) {
      const sent = chroot ? (path === '/' ? chroot : chroot + path) : path;
      const frame = reply(7, 0, [str(sent), STAT]);
      expect(decodeReply(OP.CREATE_CONTAINER, frame, chroot)).toEqual({ path });
      expect(decodeReply(OP.CREATE_CONTAINER, frame, chroot)).toEqual(
        decodeReply(OP.CREATE, reply(7, 0, [str(sent)]), chroot),
      );
    }
  });

  it.each(CHROOTS)('create (chroot %s): the path, under the chroot or not, or none', (chroot) => {
    const paths = ['/locks/order:42/_c_1-lock-0000000001', '/', '/ünï/x'];
    const sent = paths.map((p) => (chroot ? (p === '/' ? chroot : chroot + p) : p));
    for (const [i, path] of sent.entries()) {
      expectDecoded(OP.CREATE, reply(7, 0, [str(path)]), { path: paths[i] }, chroot);
    }
    if (!chroot) expectDecoded(OP.CREATE, reply(7, 0, [str(null)]), {});
  });

  it('delete: no payload', () => {
    expect(decodeReply(OP.DELETE, reply(7, 0))).toBeNull();
  });

  it.each(CHROOTS)(
    'getChildren2 (chroot %s): every listing, null and empty too, and its Stat',
    (chroot) => {
      for (const children of [[], ['a'], NAMES]) {
        const frame = reply(7, 0, [vector(children), STAT]);
        expectDecoded(OP.GET_CHILDREN2, frame, { children, stat: STAT_DECODED }, chroot);
      }
      const frame = reply(7, 0, [vector(null), STAT]);
      expectDecoded(OP.GET_CHILDREN2, frame, { stat: STAT_DECODED }, chroot);
    },
  );

  it('getData: data null, empty and some, and its Stat', () => {
    for (const data of [Buffer.alloc(0), Buffer.from('{"pid":1} ✓'), randomBytes(5000)]) {
      expectDecoded(OP.GET_DATA, reply(7, 0, [bytes(data), STAT]), { data, stat: STAT_DECODED });
    }
    expectDecoded(OP.GET_DATA, reply(7, 0, [bytes(null), STAT]), { stat: STAT_DECODED });
  });

  it('getACL: the ACL and its Stat', () => {
    const acl = [
      { permission: 31, id: { scheme: 'world', id: 'anyone' } },
      { permission: 1, id: { scheme: 'digest', id: 'u:hash' } },
    ];
    const entries = acl.map((a) =>
      Buffer.concat([int(a.permission), str(a.id.scheme), str(a.id.id)]),
    );
    const frame = reply(7, 0, [int(acl.length), ...entries, STAT]);
    expect(decodeReply(OP.GET_ACL, frame)).toEqual({ acl, stat: expect.any(Object) });
  });

  it('exists and setData: the Stat', () => {
    expectDecoded(OP.EXISTS, reply(7, 0, [STAT]), { stat: STAT_DECODED });
    expectDecoded(OP.SET_DATA, reply(7, 0, [STAT]), { stat: STAT_DECODED });
  });

  it('the ReplyHeader: xid, zxid, any error code', () => {
    for (const code of [0, -101, -125, -127, -9999]) {
      const frame = reply(7, code);
      expect(decodeReplyHeader(frame)).toEqual({ xid: 7, zxid: frame.subarray(8, 16), err: code });
    }
  });

  it('a reply cut short throws RangeError (the wire then drops the connection)', () => {
    const full = reply(7, 0, [vector(['a', 'b']), STAT]);
    for (let end = 20; end < full.length; end++) {
      const cut = Buffer.from(full.subarray(0, end));
      cut.writeInt32BE(end - 4, 0);
      expect(() => decodeReply(OP.GET_CHILDREN2, cut), `cut at ${end}`).toThrow(RangeError);
    }
    expect(() => decodeReplyHeader(reply(7, 0).subarray(0, 19))).toThrow(RangeError);
  });

  it('keeps no view of the frame (the receive buffer is reused): a long or data is a copy', () => {
    const frame = reply(7, 0, [bytes(Buffer.from('abc')), STAT]);
    const payload = decodeReply(OP.GET_DATA, frame);
    const before = JSON.stringify(payload);
    frame.fill(0xee, 8);
    expect(JSON.stringify(payload)).toBe(before);
  });
});
