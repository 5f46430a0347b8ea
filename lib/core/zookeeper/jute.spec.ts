import { createHash, randomBytes } from 'node:crypto';
import { ACL, type AclEntry } from './zk-client';
import {
  CONTAINER,
  MultiOp,
  OP,
  createOpOf,
  encodeCreate,
  encodeDelete,
  encodeMulti,
  encodePathWatch,
  decodeReply,
  decodeReplyFrame,
} from './jute';

// Expected bytes were taken once from a reference jute implementation (node-zookeeper-client's):
// a sample per request type as hex, and every case of a test through the sha256 of its frames,
// in the order the test builds them.
const hex = (frame: Buffer): string => frame.toString('hex');
const sha256 = (frames: Buffer[]): string =>
  createHash('sha256').update(Buffer.concat(frames)).digest('hex');

/** Paths as the session sends them (after a chroot, if any), and the chroots to try. */
const PATHS = ['/', '/locks/order:42', '/app/ünïcödé/_c_1-lock-0000000007', `/${'x'.repeat(300)}`];
const CHROOTS = [undefined, '/chroot/app'];
const XIDS = [0, 1, 0x7fffffff, -8];
const ACLS = [ACL.OPEN_ACL_UNSAFE, ACL.CREATOR_ALL_ACL] as AclEntry[][];

describe('our jute encoders, byte for byte against the bytes of a reference jute implementation', () => {
  it.each([
    [undefined, '774e7a9190f8e4f7a7f054e8ce01bdcba9b7bd686d582b248b9955e0c3a63d00'],
    ['/chroot/app', '5c35b0af94dddbf11962d11a8fa5c913776766af14720e157519e23c1794b284'],
  ])('create (chroot %s): every path, data and ACL', (chroot, expected) => {
    const frames: Buffer[] = [];
    for (const path of PATHS) {
      for (const data of [null, Buffer.alloc(0), Buffer.from('owner-1 ✓')]) {
        for (const acl of ACLS) {
          for (const flags of [0, 1, 2, 3]) {
            for (const xid of XIDS) {
              frames.push(encodeCreate(xid, path, data, acl, flags, chroot));
            }
          }
        }
      }
    }
    expect(frames).toHaveLength(384);
    expect(sha256(frames)).toBe(expected);
    const data = Buffer.from('owner-1 ✓');
    expect(hex(encodeCreate(1, '/locks/order:42', data, ACLS[0], 3))).toBe(
      '0000004900000001000000010000000f2f6c6f636b732f6f726465723a34320000000b6f776e65722d3120e2' +
        '9c93000000010000001f00000005776f726c6400000006616e796f6e6500000003',
    );
    expect(hex(encodeCreate(-8, '/chroot/app', null, ACLS[1], 0))).toBe(
      '00000033fffffff8000000010000000b2f6368726f6f742f617070ffffffff000000010000001f00000004' +
        '617574680000000000000000',
    );
  });

  it.each([
    [undefined, 'c6f23172eedfaf40090862f783b0ca2d6b8f6397f8346b3b06511030086e1921'],
    ['/chroot/app', '122a6007642cdc6ab34f0c2fd4c99d5b46529e8d6639fefd5a6b3d0c08bca88d'],
  ])(
    'a CONTAINER create (chroot %s) goes as createContainer (19), with the CreateRequest body',
    (chroot, expected) => {
      const data = Buffer.from('nestjs-zookeeper-lock');
      const frames: Buffer[] = [];
      for (const path of PATHS) {
        for (const acl of ACLS) {
          frames.push(encodeCreate(7, path, data, acl, CONTAINER, chroot));
        }
      }
      expect(sha256(frames)).toBe(expected);
      expect(hex(encodeCreate(7, PATHS[2], data, ACLS[0], CONTAINER))).toBe(
        '000000690000000700000013000000252f6170702fc3bc6ec3af63c3b664c3a92f5f635f312d6c6f636b2d' +
          '30303030303030303037000000156e6573746a732d7a6f6f6b65657065722d6c6f636b000000010000001f' +
          '00000005776f726c6400000006616e796f6e6500000004',
      );
      expect([0, 1, 2, 3].map(createOpOf)).toEqual([1, 1, 1, 1]);
      expect(createOpOf(CONTAINER)).toBe(19);
    },
  );

  it.each([
    [undefined, '31b0ba3c671cdcfa44ae12c681e3f796ce4c60a1cabe64bd441732db9a41068e'],
    ['/chroot/app', '2de7cfc6dda9ce8c9b09dd7335d2f75590bb095fcb89c200d07a4af3f1f6ec53'],
  ])('delete (chroot %s)', (chroot, expected) => {
    const frames: Buffer[] = [];
    for (const path of PATHS) {
      for (const version of [-1, 0, 7, 0x7fffffff]) {
        for (const xid of XIDS) frames.push(encodeDelete(xid, path, version, chroot));
      }
    }
    expect(sha256(frames)).toBe(expected);
    expect(hex(encodeDelete(0x7fffffff, '/chroot/app/locks/order:42', -1))).toBe(
      '0000002a7fffffff000000020000001a2f6368726f6f742f6170702f6c6f636b732f6f726465723a3432ffffffff',
    );
  });

  it.each([
    [
      OP.GET_CHILDREN2,
      'GetChildren2Request',
      'a895f5dd7d74ef82ecbb474a443533e0995ceb00ccc027dc652a86ede28b8739',
      [
        1,
        '/locks/order:42',
        true,
        '0000001c000000010000000c0000000f2f6c6f636b732f6f726465723a343201',
      ],
    ],
    [
      OP.GET_DATA,
      'GetDataRequest',
      'c2f62bc88bb915a617a6348e6b486860498b6da5581516c20db0754773a7e24b',
      [1, '/chroot/app', false, '0000001800000001000000040000000b2f6368726f6f742f61707000'],
    ],
    [
      OP.EXISTS,
      'ExistsRequest',
      '3a93fe4221e8986eb63740bc5f9bc03da72662d05cbccb67ce537ae35550b50b',
      [
        0,
        PATHS[2],
        true,
        '000000320000000000000003000000252f6170702fc3bc6ec3af63c3b664c3a92f5f635f312d6c6f636b2d' +
          '3030303030303030303701',
      ],
    ],
  ] as const)('op %i (%s), with and without a watch', (type, _name, expected, sample) => {
    const frames: Buffer[] = [];
    for (const chroot of CHROOTS) {
      for (const path of PATHS) {
        for (const watch of [true, false]) {
          for (const xid of XIDS) {
            frames.push(encodePathWatch(xid, type, path, watch, chroot));
          }
        }
      }
    }
    expect(sha256(frames)).toBe(expected);
    const [xid, path, watch, bytes] = sample;
    expect(hex(encodePathWatch(xid, type, path, watch))).toBe(bytes);
  });

  it.each(CHROOTS)(
    'multi (chroot %s): a create is sent as its flags say, its path under the chroot',
    (chroot) => {
      const acl = ACL.OPEN_ACL_UNSAFE as AclEntry[];
      for (const flags of [0, 3, CONTAINER]) {
        const multi = encodeMulti(
          1,
          [{ type: OP.CREATE, path: '/a', data: null, acl, flags }],
          chroot,
        );
        const create = encodeCreate(1, '/a', null, acl, flags, chroot);
        // length, xid, multi's type; the op's MultiHeader (type, done, err); its body; the end.
        expect(multi.readInt32BE(12)).toBe(create.readInt32BE(8));
        expect(multi.subarray(21, multi.length - 9)).toEqual(create.subarray(12));
      }
    },
  );

  it('multi: create, delete, setData and check ops, with the closing header', () => {
    const ops: MultiOp[] = [
      {
        type: OP.CREATE,
        path: '/locks/a',
        data: Buffer.from('x'),
        acl: ACL.OPEN_ACL_UNSAFE as AclEntry[],
        flags: 3,
      },
      {
        type: OP.CREATE,
        path: '/locks/b',
        data: null,
        acl: ACL.CREATOR_ALL_ACL as AclEntry[],
        flags: 0,
      },
      { type: OP.DELETE, path: '/locks/ç', version: 5 },
      { type: OP.SET_DATA, path: '/locks/d', data: Buffer.from('data'), version: 2 },
      { type: OP.CHECK, path: '/locks', version: 9 },
    ];
    // Every frame: its length, the xid, then the same bytes (multi's type, the ops, the end).
    const body =
      '0000000e0000000100ffffffff000000082f6c6f636b732f610000000178000000010000001f00000005776f72' +
      '6c6400000006616e796f6e65000000030000000100ffffffff000000082f6c6f636b732f62ffffffff00000001' +
      '0000001f000000046175746800000000000000000000000200ffffffff000000092f6c6f636b732fc3a70000' +
      '00050000000500ffffffff000000082f6c6f636b732f640000000464617461000000020000000d00ffffffff' +
      '000000062f6c6f636b7300000009ffffffff01ffffffff';
    const xids = { 0: '00000000', 1: '00000001', 0x7fffffff: '7fffffff', [-8]: 'fffffff8' };
    for (const xid of XIDS) {
      const xidHex = xids[xid as keyof typeof xids];
      expect(hex(encodeMulti(xid, ops))).toBe(`000000cd${xidHex}${body}`);
      expect(hex(encodeMulti(xid, []))).toBe(`00000011${xidHex}0000000effffffff01ffffffff`);
    }
  });
});

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

  it.each(CHROOTS)(
    "multi (chroot %s): the created paths, a container's with its Stat",
    (chroot) => {
      const sent = (p: string): string => (chroot ? chroot + p : p);
      const header = (type: number, done: boolean, err: number): Buffer =>
        Buffer.concat([int(type), Buffer.of(done ? 1 : 0), int(err)]);
      const results = [
        header(15, false, 0), // createContainer's result: create2 (path, Stat)
        str(sent('/locks/a')),
        STAT,
        header(1, false, 0), // create's: the path
        str(sent('/locks/a/_c_1-lock-0000000000')),
        header(-1, true, -1),
      ];
      const request = { type: OP.MULTI, frame: encodeMulti(7, []) };
      expect(decodeReplyFrame(reply(7, 0, results), request, chroot)).toMatchObject({
        err: 0,
        payload: { paths: ['/locks/a', '/locks/a/_c_1-lock-0000000000'] },
      });
    },
  );

  it("a failed multi: the failing op's code is the reply's, though its header says 0", () => {
    const error = (code: number): Buffer =>
      Buffer.concat([int(-1), Buffer.of(0), int(code), int(code)]);
    const done = Buffer.concat([int(-1), Buffer.of(1), int(-1)]);
    const request = { type: OP.MULTI, frame: encodeMulti(7, []) };
    // 0 for the ops before the failing one, RUNTIMEINCONSISTENCY (-2) for those after it.
    for (const [results, err] of [
      [[error(-101), error(-2), done], -101],
      [[error(0), error(-110), error(-2), done], -110],
    ] as const) {
      expect(decodeReplyFrame(reply(7, 0, [...results]), request)).toMatchObject({
        err,
        answers: true,
        payload: null,
      });
    }
  });

  it('the ReplyHeader: xid, zxid, any error code', () => {
    for (const code of [0, -101, -125, -127, -9999]) {
      const frame = reply(7, code);
      expect(decodeReplyFrame(frame)).toEqual({
        xid: 7,
        zxid: frame.subarray(8, 16),
        err: code,
        answers: false,
        payload: null,
      });
    }
  });

  it('the payload with the header, only for the request the reply answers without error', () => {
    const request = { type: OP.EXISTS, frame: encodePathWatch(7, OP.EXISTS, '/a', false) };
    const frame = reply(7, 0, [STAT]);
    expect(decodeReplyFrame(frame, request)).toMatchObject({
      answers: true,
      payload: { stat: STAT_DECODED },
    });
    expect(decodeReplyFrame(reply(8, 0, [STAT]), request)).toMatchObject({
      answers: false,
      payload: null,
    });
    expect(decodeReplyFrame(reply(7, -101), request).payload).toBeNull();
    expect(decodeReplyFrame(reply(7, 0), request).payload).toBeUndefined(); // unreadable
  });

  it('a reply cut short throws RangeError (the wire then drops the connection)', () => {
    const full = reply(7, 0, [vector(['a', 'b']), STAT]);
    for (let end = 20; end < full.length; end++) {
      const cut = Buffer.from(full.subarray(0, end));
      cut.writeInt32BE(end - 4, 0);
      expect(() => decodeReply(OP.GET_CHILDREN2, cut), `cut at ${end}`).toThrow(RangeError);
    }
    expect(() => decodeReplyFrame(reply(7, 0).subarray(0, 19))).toThrow(RangeError);
  });

  it('keeps no view of the frame (the receive buffer is reused): a long or data is a copy', () => {
    const frame = reply(7, 0, [bytes(Buffer.from('abc')), STAT]);
    const payload = decodeReply(OP.GET_DATA, frame);
    const before = JSON.stringify(payload);
    frame.fill(0xee, 8);
    expect(JSON.stringify(payload)).toBe(before);
  });
});
