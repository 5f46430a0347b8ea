import { randomBytes } from 'node:crypto';
import { OP } from './jute-requests';
import { decodeReply, decodesReplyOf } from './jute-replies';
import { ConnectionHooks, walkFrames } from './nzc-patch';

// node-zookeeper-client's own reply handling, the reference every reply is checked against.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ConnectionManager = require('node-zookeeper-client/lib/ConnectionManager.js');

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

interface Outcome {
  err?: { code: number; name: string };
  thrown?: string;
  payload?: unknown;
  zxid?: Buffer;
}

/** Field by field, as the engine reads them (a record's methods and schema left out). */
function fields(payload: any): unknown {
  if (payload === null || payload === undefined) return payload;
  const out: Record<string, unknown> = {};
  for (const key of ['path', 'children', 'data']) if (key in payload) out[key] = payload[key];
  if (payload.stat) out.stat = Object.fromEntries(STAT_FIELDS.map((f) => [f, payload.stat[f]]));
  return out;
}

function connectionManager(chroot: string | undefined, packet: unknown): any {
  return Object.assign(Object.create(ConnectionManager.prototype), {
    state: 2, // CONNECTED
    pendingBuffer: null,
    pendingQueue: [packet],
    chrootPath: chroot,
    zxid: undefined,
    socket: { destroyed: false, destroy() {}, setTimeout() {} },
    watcherManager: { emit() {} },
  });
}

/** Hands `frame`, the reply to request `type` of xid 7, to the client's code or to ours. */
function answer(by: 'client' | 'ours', type: number, frame: Buffer, chroot?: string): Outcome {
  const outcome: Outcome = {};
  const callback = (err: any, response?: any) => {
    if (err) outcome.err = { code: err.getCode(), name: err.name };
    else outcome.payload = fields(response.payload);
  };
  const header = { xid: 7, type };
  const packet = { request: by === 'ours' ? { header, ours: true } : { header }, callback };
  const cm = connectionManager(chroot, packet);
  try {
    if (by === 'client') cm.onSocketData(frame);
    else {
      const hooks = { answered() {}, undecodable: () => void (outcome.thrown = 'undecodable') };
      walkFrames(cm, frame, hooks as unknown as ConnectionHooks, () => {
        throw new Error('handed to the client');
      });
    }
  } catch (err) {
    outcome.thrown = by === 'client' ? 'undecodable' : String(err);
  }
  if (!outcome.thrown) outcome.zxid = cm.zxid;
  return outcome;
}

const expectSame = (type: number, frame: Buffer, chroot?: string): void => {
  const ours = answer('ours', type, frame, chroot);
  expect(ours).toEqual(answer('client', type, frame, chroot));
  expect('payload' in ours || 'err' in ours || 'thrown' in ours).toBe(true); // it was answered
};

const NAMES = ['_c_1b2c-lock-0000000007', 'ünïcödé ✓', '', 'x'.repeat(300)];
const CHROOTS = [undefined, '/chroot/app'];

describe('our reply decoding, reply for reply against node-zookeeper-client 1.1.3', () => {
  it('takes the replies to create, delete, getChildren2 and getData, and no other', () => {
    const ours = Object.values(OP).filter(decodesReplyOf);
    expect(ours.sort()).toEqual(
      [OP.CREATE, OP.CREATE_CONTAINER, OP.DELETE, OP.GET_DATA, OP.GET_CHILDREN2].sort(),
    );
  });

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
    // No path at all (never sent): the client's chroot step would throw on it, so only without.
    for (const path of chroot ? sent : [...sent, null]) {
      expectSame(OP.CREATE, reply(7, 0, [str(path)]), chroot);
    }
  });

  it('delete: no payload', () => {
    expectSame(OP.DELETE, reply(7, 0));
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

  it('errors: the client Exception of each code; a code missing from its table throws', () => {
    for (const code of [-101, -110, -111, -112, -4]) {
      for (const type of [OP.CREATE, OP.DELETE, OP.GET_CHILDREN2, OP.GET_DATA]) {
        expectSame(type, reply(7, code));
      }
    }
    expect(answer('ours', OP.CREATE, reply(7, -125))).toEqual({ thrown: 'undecodable' });
    expect(answer('client', OP.CREATE, reply(7, -125))).toEqual({ thrown: 'undecodable' });
  });

  it('leaves to the client a reply out of order, a notification, and any state but connected', () => {
    const handed = (frame: Buffer, state = 2, ours = true): boolean => {
      let toClient = false;
      const header = { xid: 7, type: OP.CREATE };
      const cm = connectionManager(undefined, { request: { header, ours }, callback() {} });
      cm.state = state;
      walkFrames(cm, frame, { answered() {} } as unknown as ConnectionHooks, () => {
        toClient = true;
      });
      return toClient;
    };
    const created = reply(7, 0, [str('/a')]);
    expect(handed(created)).toBe(false);
    expect(handed(reply(8, 0, [str('/a')]))).toBe(true); // xid out of order
    expect(handed(reply(-1, 0))).toBe(true); // a watch notification
    expect(handed(created, 1)).toBe(true); // CONNECTING: the ConnectResponse
    expect(handed(created, -1)).toBe(true); // CLOSING
    expect(handed(created, 2, false)).toBe(true); // a request the client encoded
    const short = Buffer.from(created.subarray(0, 19)); // a frame too short for a ReplyHeader
    short.writeInt32BE(15, 0);
    expect(handed(short)).toBe(true); // the client's to refuse, our request left in its queue
  });

  it('takes a reply it cannot decode off the queue uncalled, as the client does', () => {
    const cut = reply(7, 0, [vector(['a', 'b'])]); // a listing without its Stat
    for (const [type, frame] of [
      [OP.CREATE, reply(7, -125)], // a code missing from the client's table
      [OP.GET_CHILDREN2, cut],
    ] as const) {
      for (const by of ['client', 'ours'] as const) {
        const header = { xid: 7, type };
        const packet = {
          request: by === 'ours' ? { header, ours: true } : { header },
          callback: vi.fn(),
        };
        const cm = connectionManager(undefined, packet);
        const undecodable = vi.fn();
        walkFrames(cm, frame, { answered() {}, undecodable } as unknown as ConnectionHooks, (f) =>
          ConnectionManager.prototype.onSocketData.call(cm, f),
        );
        expect(undecodable).toHaveBeenCalledOnce();
        expect(cm.pendingQueue).toEqual([]);
        expect(packet.callback).not.toHaveBeenCalled();
      }
    }
  });

  it('keeps no view of the frame (the receive buffer is reused): a long or data is a copy', () => {
    const frame = reply(7, 0, [bytes(Buffer.from('abc')), stat()]);
    const { payload, zxid } = answer('ours', OP.GET_DATA, frame) as { payload: any; zxid: Buffer };
    const before = JSON.stringify({ payload, zxid });
    frame.fill(0xee, 8);
    expect(JSON.stringify({ payload, zxid })).toBe(before);
  });
});
