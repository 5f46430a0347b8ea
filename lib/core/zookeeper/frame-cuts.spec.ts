/**
 * What the connection reads when the server's bytes arrive cut anywhere: each reply kind the
 * library reads, a watch notification and the ConnectResponse, split at every byte across reads
 * of one socket, merged with others in one read, and cut at every byte by a dropped connection
 * (the next socket starts with no byte of the old one: docs/design.md "The connection layer").
 * And how requests are numbered once a session has sent 2^31-2 of them, and which are too long
 * to be written at all.
 *
 * Only `Wire` below knows how the connection is built (ZkWire and SessionRequests, on sockets
 * the test opens and feeds); the cases speak of sockets, bytes and answers.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { ACL, type AclEntry, type Watcher, type WatcherEvent } from './zk-client';
import { SessionRequests } from './zk-session';
import { MAX_REQUEST_BYTES, OP, encodeCreate, encodePathWatch } from './jute';
import { ZkWire } from './zk-wire';
import { InvalidLockOptionsError } from '../errors';
import { ZkRequestError } from './zk-errors';

const SESSION_ID = Buffer.from('0123456789abcdef', 'hex');
const PASSWORD = Buffer.alloc(16, 7);
const ASKED_MS = 6_000;

const int = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const long = (n: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const str = (s: string): Buffer => Buffer.concat([int(Buffer.byteLength(s)), Buffer.from(s)]);
const framed = (...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  return Buffer.concat([int(body.length), body]);
};
/** A Stat whose every field tells which one it is (czxid 0x1111..., version 5, ...). */
const STAT = Buffer.concat([
  long(0x1111n),
  long(0x2222n),
  long(0x3333n),
  long(0x4444n),
  int(5), // version
  int(6), // cversion
  int(7), // aversion
  SESSION_ID, // ephemeralOwner
  int(3), // dataLength
  int(2), // numChildren
  long(0x5555n),
]);
const reply = (xid: number, err: number, ...payload: Buffer[]): Buffer =>
  framed(int(xid), long(0x99n), int(err), ...payload);
const connectResponse = (timeoutMs: number, sessionId = SESSION_ID): Buffer =>
  framed(int(0), int(timeoutMs), sessionId, int(PASSWORD.length), PASSWORD, Buffer.from([0]));
/** The session as the client sees it once connected by connectResponse(timeoutMs). */
const connectedTo = (timeoutMs: number) => ({ connected: true, id: SESSION_ID, timeoutMs });
const NODE_DELETED = 2;
const SYNC_CONNECTED = 3;
const notification = (path: string): Buffer =>
  reply(-1, 0, int(NODE_DELETED), int(SYNC_CONNECTED), str(path));

/** A socket the test opens: what the client writes on it is kept, frame by frame. */
class TestSocket extends EventEmitter {
  readonly written: Buffer[] = [];
  destroyed = false;
  writableCorked = 0;
  private closed = false;
  write(chunk: Buffer): boolean {
    this.written.push(Buffer.from(chunk));
    return true;
  }
  /** Destroyed by the wire: its 'close' comes a tick later, as a real socket's. */
  destroy(): void {
    this.destroyed = true;
    process.nextTick(() => this.close());
  }
  /** Its 'close' event, once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close', true);
  }
  cork(): void {
    this.writableCorked++;
  }
  uncork(): void {
    this.writableCorked = Math.max(0, this.writableCorked - 1);
  }
  setTimeout(): void {}
  setNoDelay(): void {}
}

const SERVER = { host: '127.0.0.1', port: 2181 };

/**
 * One session's wire, its sockets opened, fed and dropped by the test (no network): the wire
 * never opens a socket of its own (mayConnect is false; open() opens one).
 */
class Wire {
  readonly zk: ZkWire;
  readonly requests: SessionRequests;
  answers = 0;
  private socket?: TestSocket;
  /** exists with a watch, as a client's: a data watch when the node exists (ZooKeeper's rule). */
  readonly client = {
    exists: (
      path: string,
      watcher: Watcher | undefined,
      cb: (err: unknown, stat?: unknown) => void,
    ) => {
      const frame = encodePathWatch(0, OP.EXISTS, path, !!watcher);
      this.zk.request(OP.EXISTS, frame, (code, payload) => {
        const stat = code !== 0 ? undefined : (payload as { stat: unknown }).stat;
        if (watcher && code === 0) this.zk.watch('data', path, watcher);
        cb(code !== 0 ? { code } : null, stat);
      });
    },
    getSessionId: (): Buffer => this.zk.sessionCredentials().id,
  };

  constructor() {
    this.zk = new ZkWire({
      target: { servers: [SERVER] },
      sessionTimeoutMs: ASKED_MS,
      authPackets: [],
      openSocket: () => {
        this.socket = new TestSocket();
        return this.socket as unknown as Socket;
      },
      handlers: {
        connected: () => undefined,
        disconnected: () => undefined,
        expired: () => undefined,
        authFailed: () => undefined,
        answered: () => void this.answers++,
        socketFailed: () => undefined,
        mayConnect: () => false, // the test opens every socket itself (open())
        ended: () => undefined,
      },
    });
    this.requests = new SessionRequests({
      timeoutMs: 60_000,
      wire: this.zk,
      acl: ACL.OPEN_ACL_UNSAFE as AclEntry[],
      gone: (op, path) => new ZkRequestError(-112, op, path),
      authFailure: () => undefined,
    });
  }

  /** A new socket connects: the wire writes its ConnectRequest on it. */
  open(): void {
    (this.zk as unknown as { open(server: typeof SERVER): void }).open(SERVER);
    this.socket!.emit('connect');
  }

  /** The session id the last ConnectRequest asked to resume. */
  get resumedSessionId(): Buffer {
    return this.socket!.written[0].subarray(20, 28);
  }

  /** Bytes arrive on the current socket. */
  read(bytes: Buffer): void {
    this.socket!.emit('data', bytes);
  }

  /** The current socket is dropped (reset by a peer, or closed by the client). */
  drop(): void {
    this.socket!.destroyed = true;
    this.socket!.close();
  }

  /** How many frames were written on the current socket. */
  get writes(): number {
    return this.socket!.written.length;
  }

  /** The xid of the last request written on the current socket. */
  get lastXid(): number {
    const frames = this.socket!.written;
    return frames[frames.length - 1].readInt32BE(4);
  }

  get connected(): boolean {
    return this.zk.connected;
  }

  /** The next request is numbered `xid`. */
  startXidsAt(xid: number): void {
    this.zk.startXidsAt(xid);
  }

  /** The session as the wire sees it now. */
  get session(): { connected: boolean; id: Buffer; timeoutMs: number } {
    const { connected, zk } = this;
    return { connected, id: zk.sessionCredentials().id, timeoutMs: zk.negotiatedTimeoutMs };
  }

  /** A connected session: a socket opened and its ConnectResponse read. */
  static connected(): Wire {
    const wire = new Wire();
    wire.open();
    wire.read(connectResponse(ASKED_MS));
    expect(wire.connected).toBe(true);
    return wire;
  }

  end(): void {
    this.requests.idle();
    this.zk.end();
  }
}

/** How a request settled, read once its promise had a chance to (a microtask later). */
type Settled = { value: unknown } | { error: unknown } | 'pending';

function track(promise: Promise<unknown>): () => Settled {
  let settled: Settled = 'pending';
  promise.then(
    (value) => (settled = { value }),
    (error) => (settled = { error }),
  );
  return () => settled;
}
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A request the library sends, the reply that answers it (by xid), and what it resolves to. */
interface ReplyKind {
  name: string;
  send(wire: Wire): Promise<unknown>;
  reply(xid: number): Buffer;
  expected: Settled;
}

const LISTING = { children: ['a', 'lock-0000000001'], czxid: 0x1111n, cversion: 6, version: 5 };
const STAT_SEEN = expect.objectContaining({ version: 5, cversion: 6, numChildren: 2 });
const REPLY_KINDS: ReplyKind[] = [
  {
    name: 'create',
    send: (w) => w.requests.create('/locks/x/lock-', Buffer.from('{}'), 3),
    reply: (xid) => reply(xid, 0, str('/locks/x/lock-0000000042')),
    expected: { value: '/locks/x/lock-0000000042' },
  },
  {
    name: 'delete',
    send: (w) => w.requests.remove('/locks/x/lock-0000000042', -1),
    reply: (xid) => reply(xid, 0),
    expected: { value: undefined },
  },
  {
    name: 'getChildren2',
    send: (w) => w.requests.getChildren('/locks/x'),
    reply: (xid) => reply(xid, 0, int(2), str('a'), str('lock-0000000001'), STAT),
    expected: { value: LISTING },
  },
  {
    name: 'getData',
    send: (w) => w.requests.getData('/locks/x/a'),
    reply: (xid) => reply(xid, 0, int(3), Buffer.from('abc'), STAT),
    expected: { value: { data: Buffer.from('abc'), stat: STAT_SEEN } },
  },
  {
    name: 'setData',
    send: (w) => w.requests.setData('/locks/x', Buffer.from('1'), 5),
    reply: (xid) => reply(xid, 0, STAT),
    expected: { value: STAT_SEEN },
  },
  {
    name: 'exists',
    send: (w) =>
      new Promise((resolve, reject) =>
        w.client.exists('/', undefined, (err: unknown, stat: unknown) =>
          err ? reject(err) : resolve(stat),
        ),
      ),
    reply: (xid) => reply(xid, 0, STAT),
    expected: { value: STAT_SEEN },
  },
  {
    name: 'an error reply (create, NONODE)',
    send: (w) => w.requests.create('/missing/lock-', null, 3),
    reply: (xid) => reply(xid, -101),
    expected: { error: expect.objectContaining({ code: -101 }) },
  },
];

/** Every way to cut `bytes` in two: [head, tail] for each offset 1..length-1. */
function cuts(bytes: Buffer): Array<[number, Buffer, Buffer]> {
  return Array.from({ length: bytes.length - 1 }, (_, i) => [
    i + 1,
    bytes.subarray(0, i + 1),
    bytes.subarray(i + 1),
  ]);
}

describe('a reply cut at any byte', () => {
  describe.each(REPLY_KINDS)('$name', (kind) => {
    it('split across two reads of one socket, at every byte: answered once, as sent', async () => {
      const sample = kind.reply(1);
      for (const [at] of cuts(sample)) {
        const wire = Wire.connected();
        const settled = track(kind.send(wire));
        const bytes = kind.reply(wire.lastXid);
        wire.read(bytes.subarray(0, at));
        await flush();
        expect({ at, settled: settled() }).toEqual({ at, settled: 'pending' });
        wire.read(bytes.subarray(at));
        await flush();
        expect({ at, settled: settled() }).toEqual({ at, settled: kind.expected });
        wire.end();
      }
    });

    it('cut at every byte by a dropped connection: the next socket reads its own bytes only', async () => {
      for (const [at] of cuts(kind.reply(1))) {
        const wire = Wire.connected();
        const first = track(kind.send(wire));
        wire.read(kind.reply(wire.lastXid).subarray(0, at));
        wire.drop();
        await flush();
        expect({ at, first: first() }).toEqual({
          at,
          first: { error: expect.objectContaining({ code: -4 }) }, // CONNECTION_LOSS
        });
        wire.open();
        expect(wire.resumedSessionId).toEqual(SESSION_ID);
        wire.read(connectResponse(ASKED_MS));
        expect({ at, ...wire.session }).toEqual({ at, ...connectedTo(ASKED_MS) });
        const again = track(kind.send(wire));
        wire.read(kind.reply(wire.lastXid));
        await flush();
        expect({ at, again: again() }).toEqual({ at, again: kind.expected });
        wire.end();
      }
    });
  });

  it('several replies, a ping reply and a notification in one stream, split at every byte', async () => {
    for (let at = 1; at < 400; at++) {
      const wire = Wire.connected();
      const deleted: string[] = [];
      wire.client.exists(
        '/locks/x/a',
        (e: WatcherEvent) => deleted.push(e.path),
        () => undefined,
      );
      wire.read(reply(wire.lastXid, 0, STAT)); // the watch is set
      const [create, listing] = [REPLY_KINDS[0], REPLY_KINDS[2]];
      const created = track(create.send(wire));
      const createXid = wire.lastXid;
      const listed = track(listing.send(wire));
      const stream = Buffer.concat([
        create.reply(createXid),
        reply(-2, 0), // ping reply
        notification('/locks/x/a'),
        listing.reply(wire.lastXid),
      ]);
      if (at >= stream.length) {
        wire.end();
        break;
      }
      wire.read(stream.subarray(0, at));
      wire.read(stream.subarray(at));
      await flush();
      expect({ at, created: created(), listed: listed(), deleted }).toEqual({
        at,
        created: create.expected,
        listed: listing.expected,
        deleted: ['/locks/x/a'],
      });
      wire.end();
    }
  });

  it('one byte per read: every frame is read whole, each answer counted once', async () => {
    const wire = Wire.connected();
    const answersBefore = wire.answers;
    const settled = REPLY_KINDS.map((kind) => {
      const s = track(kind.send(wire));
      const bytes = kind.reply(wire.lastXid);
      for (let i = 0; i < bytes.length; i++) wire.read(bytes.subarray(i, i + 1));
      return s;
    });
    await flush();
    expect(settled.map((s) => s())).toEqual(REPLY_KINDS.map((kind) => kind.expected));
    expect(wire.answers - answersBefore).toBe(REPLY_KINDS.length);
    wire.end();
  });
});

describe('a notification cut at any byte', () => {
  const watched = (): { wire: Wire; events: string[] } => {
    const wire = Wire.connected();
    const events: string[] = [];
    wire.client.exists(
      '/locks/x/a',
      (e: WatcherEvent) => events.push(e.path),
      () => undefined,
    );
    wire.read(reply(wire.lastXid, 0, STAT));
    return { wire, events };
  };

  it('split across two reads: the watcher is told once, with its path', () => {
    for (const [at, head, tail] of cuts(notification('/locks/x/a'))) {
      const { wire, events } = watched();
      wire.read(head);
      expect({ at, events }).toEqual({ at, events: [] });
      wire.read(tail);
      expect({ at, events }).toEqual({ at, events: ['/locks/x/a'] });
      expect(wire.answers).toBe(2); // the handshake and the exists: a notification is no answer
      wire.end();
    }
  });

  it('cut by a dropped connection: the next socket connects to the same session', () => {
    for (const [at, head] of cuts(notification('/locks/x/a'))) {
      const { wire, events } = watched();
      wire.read(head);
      wire.drop();
      wire.open();
      wire.read(Buffer.concat([connectResponse(ASKED_MS), notification('/locks/x/a')]));
      expect({ at, connected: wire.connected, id: wire.client.getSessionId(), events }).toEqual({
        at,
        connected: true,
        id: SESSION_ID,
        events: ['/locks/x/a'],
      });
      wire.end();
    }
  });
});

describe('the ConnectResponse cut at any byte', () => {
  it('split across two reads: connected to the session and timeout it gives', () => {
    for (const [at, head, tail] of cuts(connectResponse(4_000))) {
      const wire = new Wire();
      wire.open();
      wire.read(head);
      expect({ at, connected: wire.connected }).toEqual({ at, connected: false });
      wire.read(tail);
      expect({ at, ...wire.session }).toEqual({ at, ...connectedTo(4_000) });
      wire.end();
    }
  });

  it('cut by a dropped connection: the next socket reads only its own ConnectResponse', () => {
    const other = Buffer.from('fedcba9876543210', 'hex');
    for (const [at, head] of cuts(connectResponse(2_359_296, other))) {
      const wire = new Wire();
      wire.open();
      wire.read(head);
      wire.drop();
      wire.open();
      wire.read(connectResponse(4_000));
      expect({ at, ...wire.session }).toEqual({ at, ...connectedTo(4_000) });
      wire.end();
    }
  });

  it('merged with the replies that follow it in one read', async () => {
    const wire = new Wire();
    wire.open();
    const created = track(REPLY_KINDS[0].send(wire)); // queued until connected, then written
    wire.read(Buffer.concat([connectResponse(ASKED_MS), reply(-2, 0)]));
    expect(wire.connected).toBe(true);
    wire.read(REPLY_KINDS[0].reply(wire.lastXid));
    await flush();
    expect(created()).toEqual(REPLY_KINDS[0].expected);
    wire.end();
  });
});

describe('request numbers', () => {
  it("wrap to 1 after 2^31-2, as Java's client's do, each reply still answering its request", async () => {
    const wire = Wire.connected();
    wire.startXidsAt(2 ** 31 - 3);
    const remove = REPLY_KINDS[1];
    const xids: number[] = [];
    const settled = Array.from({ length: 4 }, () => {
      const answer = track(remove.send(wire));
      xids.push(wire.lastXid);
      wire.read(remove.reply(wire.lastXid));
      return answer;
    });
    await flush();
    expect(xids).toEqual([2 ** 31 - 3, 2 ** 31 - 2, 1, 2]);
    expect(settled.map((s) => s())).toEqual(Array(4).fill(remove.expected));
    wire.end();
  });
});

describe('a request longer than jute.maxbuffer', () => {
  it('is refused before it is written, naming the limit and what to do; one at it is sent', async () => {
    const wire = Wire.connected();
    const path = '/locks/x/lock-';
    const acl = ACL.OPEN_ACL_UNSAFE as AclEntry[];
    const empty = encodeCreate(0, path, Buffer.alloc(0), acl, 3).length - 4;
    const fits = MAX_REQUEST_BYTES - empty; // data bytes of a create exactly at the limit
    const writes = wire.writes;
    const refused = track(wire.requests.create(path, Buffer.alloc(fits + 1), 3));
    await flush();
    expect(refused()).toEqual({ error: expect.any(InvalidLockOptionsError) });
    const { message } = (refused() as { error: Error }).error;
    expect(message).toContain(`ZooKeeper create "${path}"`);
    expect(message).toContain(`its request is ${MAX_REQUEST_BYTES + 1} bytes`);
    expect(message).toContain(`over the limit of ${MAX_REQUEST_BYTES} bytes`);
    expect(message).toContain('Shorten what it carries');
    expect(wire.writes).toBe(writes);
    const sent = track(wire.requests.create(path, Buffer.alloc(fits), 3));
    expect(wire.writes).toBe(writes + 1);
    wire.read(REPLY_KINDS[0].reply(wire.lastXid));
    await flush();
    expect(sent()).toEqual(REPLY_KINDS[0].expected);
    wire.end();
  });
});
