/**
 * The wire's framing: every reply kind, every notification and the ConnectResponse, delivered
 * whole, cut at every byte offset, one byte at a time, and split or merged at random (seeded)
 * across reads, also across a reconnect, must give the same answers and events as the bytes
 * read in one go. The sockets are stand-ins fed by the spec (no network), so each read is
 * exactly the chunk the spec chose.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { MAX_XID, WireHandlers, ZkWire } from './zk-wire';
import { OP, encodeCreate, encodeDelete, encodePathWatch, encodeSetData } from './jute';
import { EVENT_NAMES } from './jute';
import { ZOOKEEPER_CODES, codeName } from './zk-errors';
import { ACL } from './zk-client';
import { ZkCredentials } from './zk-credentials';
import { inspect } from 'node:util';
import { seededRandom as random } from '../../../test/support/seeded-random';

/** A socket the spec feeds: records writes, reads what `feed` gives it. */
class StandInSocket extends EventEmitter {
  readonly written: Buffer[] = [];
  destroyed = false;
  writableCorked = 0;
  localPort = 40000;

  setNoDelay(): this {
    return this;
  }

  cork(): void {
    this.writableCorked++;
  }

  uncork(): void {
    this.writableCorked = Math.max(0, this.writableCorked - 1);
  }

  write(data: Buffer): boolean {
    this.written.push(Buffer.from(data));
    return true;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    process.nextTick(() => this.emit('close', false));
    return this;
  }

  /** The TCP connection is up (the wire writes its ConnectRequest). */
  open(): void {
    this.emit('connect');
  }

  feed(chunks: readonly Buffer[]): void {
    for (const chunk of chunks) {
      if (this.destroyed) return;
      this.emit('data', chunk);
    }
  }
}

const frame = (...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length);
  return Buffer.concat([length, body]);
};
const int = (value: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(value);
  return b;
};
const long = (value: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(value);
  return b;
};
const str = (value: string): Buffer => {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([int(bytes.length), bytes]);
};
const bytes = (value: Buffer): Buffer => Buffer.concat([int(value.length), value]);
const stat = (n: number): Buffer =>
  Buffer.concat([
    long(BigInt(n)),
    long(2n),
    long(3n),
    long(4n),
    int(5),
    int(n),
    int(7),
    long(0x1234n),
    int(9),
    int(1),
    long(11n),
  ]);

const SESSION_ID = 0x100000abcdefn;
const connectResponse = (timeoutMs: number, readOnly?: boolean): Buffer =>
  frame(
    int(0),
    int(timeoutMs),
    long(SESSION_ID),
    bytes(Buffer.alloc(16, 7)),
    ...(readOnly === undefined ? [] : [Buffer.from([readOnly ? 1 : 0])]),
  );
const reply = (xid: number, zxid: number, err: number, ...payload: Buffer[]): Buffer =>
  frame(int(xid), long(BigInt(zxid)), int(err), ...payload);
const notification = (type: number, path: string): Buffer =>
  frame(int(-1), long(-1n), int(0), int(type), int(3), str(path));

/** One wire on stand-in sockets, with everything it told and answered, in order. */
function harness(sessionTimeoutMs = 9000) {
  const sockets: StandInSocket[] = [];
  const log: string[] = [];
  const handlers: WireHandlers = {
    connected: (id, timeoutMs) => log.push(`connected ${id} ${timeoutMs}`),
    disconnected: () => log.push('disconnected'),
    expired: () => log.push('expired'),
    authFailed: () => log.push('auth-failed'),
    answered: () => undefined,
    socketFailed: () => undefined,
    mayConnect: () => true,
    ended: () => log.push('ended'),
  };
  const wire = new ZkWire({
    target: { servers: [{ host: 'zk1', port: 2181 }], chroot: '/app' },
    sessionTimeoutMs,
    authPackets: [],
    handlers,
    spinDelayMs: 0,
    openSocket: () => {
      const socket = new StandInSocket();
      sockets.push(socket);
      return socket as unknown as Socket;
    },
  });
  const send = (name: string, type: number, request: Buffer): void =>
    wire.request(type, request, (code, payload) =>
      log.push(`${name}: ${code !== 0 ? `${codeName(code)}[${code}]` : JSON.stringify(payload)}`),
    );
  const watch = (kind: 'data' | 'exist' | 'child', path: string): void =>
    wire.watch(kind, path, (event) => log.push(`watch ${kind} ${event.name} ${event.path}`));
  /** Waits for the next attempt's socket (the wire opens it on the next tick). */
  const nextSocket = async (): Promise<StandInSocket> => {
    const count = sockets.length;
    for (let i = 0; i < 100 && sockets.length === count; i++) await new Promise(setImmediate);
    return sockets[sockets.length - 1];
  };
  return { wire, log, send, watch, nextSocket, sockets };
}

/** The requests of the scripted session (issued before the handshake: xids 0 to 6). */
function sendAll(send: ReturnType<typeof harness>['send']): void {
  send('create', OP.CREATE, encodeCreate(0, '/app/locks/a', null, ACL.OPEN_ACL_UNSAFE, 3));
  send('children', OP.GET_CHILDREN2, encodePathWatch(0, OP.GET_CHILDREN2, '/app/locks', true));
  send('data', OP.GET_DATA, encodePathWatch(0, OP.GET_DATA, '/app/locks/b', true));
  send('exists', OP.EXISTS, encodePathWatch(0, OP.EXISTS, '/app', false));
  send('set', OP.SET_DATA, encodeSetData(0, '/app/locks/b', Buffer.from('x'), 1));
  send('delete', OP.DELETE, encodeDelete(0, '/app/locks/a', -1));
  send('missing', OP.GET_DATA, encodePathWatch(0, OP.GET_DATA, '/app/none', false));
}

/** What a server answers to sendAll, with notifications, a ping reply and SetWatches' between. */
const SCRIPT: Buffer = Buffer.concat([
  connectResponse(6000, false),
  reply(0, 10, 0, str('/app/locks/a0000000001')),
  notification(4, '/app/locks'),
  reply(1, 11, 0, int(2), str('a0000000001'), str('b0000000000'), stat(2)),
  reply(-2, 11, 0), // a ping's answer
  reply(2, 12, 0, bytes(Buffer.from('owner ✓')), stat(3)),
  reply(-8, 12, 0), // SetWatches' answer
  reply(3, 12, 0, stat(4)),
  notification(3, '/app/locks/b'),
  reply(4, 13, 0, stat(5)),
  reply(5, 14, 0),
  notification(2, '/app/locks/b'),
  reply(6, 14, -101),
]);

/** Runs the script through a fresh wire, read as `chunks` say; returns the log. */
async function run(chunks: (script: Buffer) => Buffer[]): Promise<string[]> {
  const { wire, log, send, watch, nextSocket } = harness();
  wire.start();
  const socket = await nextSocket();
  sendAll(send);
  watch('child', '/locks');
  watch('data', '/locks/b');
  socket.open();
  socket.feed(chunks(SCRIPT));
  wire.end();
  return log;
}

/** `data` cut at each of `offsets` (ascending). */
function cutAt(data: Buffer, offsets: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const offset of offsets) {
    chunks.push(data.subarray(at, offset));
    at = offset;
  }
  chunks.push(data.subarray(at));
  return chunks;
}

const FUZZ_SEED = Number(process.env.WIRE_FUZZ_SEED ?? Date.now() % 1_000_000);
const FUZZ_RUNS = Number(process.env.WIRE_FUZZ_RUNS ?? 300);

describe('ZkWire framing', () => {
  let whole: string[];

  beforeAll(async () => {
    whole = await run((script) => [script]);
  });

  it('reads every reply kind, notification and the handshake in one read', () => {
    expect(whole).toEqual([
      'connected 100000abcdef 6000',
      'create: {"path":"/locks/a0000000001"}',
      'watch child NODE_CHILDREN_CHANGED /locks',
      expect.stringMatching(/^children: \{"children":\["a0000000001","b0000000000"\],"stat":/),
      expect.stringMatching(/^data: \{"data":\{"type":"Buffer","data":\[111,/),
      expect.stringMatching(/^exists: \{"stat":\{"czxid":/),
      'watch data NODE_DATA_CHANGED /locks/b',
      expect.stringMatching(/^set: \{"stat":/),
      'delete: null',
      'missing: NO_NODE[-101]',
    ]);
  });

  it('gives the same at every cut offset (two reads)', async () => {
    for (let offset = 1; offset < SCRIPT.length; offset++) {
      expect(await run((script) => cutAt(script, [offset]))).toEqual(whole);
    }
  });

  it('gives the same one byte at a time', async () => {
    const offsets = Array.from({ length: SCRIPT.length - 1 }, (_, i) => i + 1);
    expect(await run((script) => cutAt(script, offsets))).toEqual(whole);
  });

  it('gives the same for every pair of cuts inside the handshake and the first reply', async () => {
    const end = connectResponse(6000, false).length + 8;
    for (let a = 1; a < end; a++) {
      for (let b = a + 1; b <= end; b++) {
        expect(await run((script) => cutAt(script, [a, b]))).toEqual(whole);
      }
    }
  });

  it(`gives the same for ${FUZZ_RUNS} seeded random splits and merges (WIRE_FUZZ_SEED=${FUZZ_SEED} replays, WIRE_FUZZ_RUNS runs more)`, async () => {
    const seed = FUZZ_SEED;
    const runs = FUZZ_RUNS;
    const next = random(seed);
    for (let i = 0; i < runs; i++) {
      const offsets = [
        ...new Set(
          Array.from(
            { length: Math.floor(next() * 12) },
            () => 1 + Math.floor(next() * (SCRIPT.length - 1)),
          ),
        ),
      ].sort((x, y) => x - y);
      const log = await run((script) => cutAt(script, offsets));
      expect(log, `seed ${seed}, run ${i}, cuts ${offsets.join(',')}`).toEqual(whole);
    }
  });

  it('never completes a frame of a new connection with bytes of the old one (cut at every offset)', async () => {
    const response = connectResponse(6000, false);
    const firstReply = reply(0, 10, 0, str('/app/locks/a0000000001'));
    for (let cut = 0; cut < firstReply.length; cut++) {
      const { wire, log, send, nextSocket } = harness();
      wire.start();
      const first = await nextSocket();
      first.open();
      first.feed([response]);
      send('create', OP.CREATE, encodeCreate(0, '/app/locks/a', null, ACL.OPEN_ACL_UNSAFE, 3));
      first.feed([firstReply.subarray(0, cut)]);
      first.destroy(); // the rest of that reply never comes
      const second = await nextSocket();
      send('again', OP.GET_DATA, encodePathWatch(0, OP.GET_DATA, '/app/locks/a', false));
      second.open();
      second.feed([response, reply(1, 11, -101)]);
      wire.end();
      expect(log, `cut at ${cut}`).toEqual([
        'connected 100000abcdef 6000',
        'create: CONNECTION_LOSS[-4]',
        'disconnected',
        'connected 100000abcdef 6000',
        'again: NO_NODE[-101]',
      ]);
    }
  });

  it('reads a handshake with no readOnly byte (servers before 3.4) and refuses a read-only one', async () => {
    const old = harness();
    old.wire.start();
    const socket = await old.nextSocket();
    socket.open();
    socket.feed([connectResponse(4000)]);
    expect(old.log).toEqual(['connected 100000abcdef 4000']);
    old.wire.end();

    const ro = harness();
    ro.wire.start();
    const first = await ro.nextSocket();
    first.open();
    first.feed([connectResponse(4000, true)]);
    expect(ro.log).toEqual([]);
    expect(first.destroyed).toBe(true);
    expect(ro.wire.connected).toBe(false);
    ro.wire.end();
  });

  it('drops a connection whose reply answers no request in order, or whose length is negative', async () => {
    for (const bad of [reply(5, 1, 0), Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 2, 3, 4])]) {
      const { wire, log, send, nextSocket } = harness();
      wire.start();
      const socket = await nextSocket();
      socket.open();
      socket.feed([connectResponse(6000, false)]);
      send('create', OP.CREATE, encodeCreate(0, '/app/locks/a', null, ACL.OPEN_ACL_UNSAFE, 3));
      socket.feed([bad]);
      await nextSocket();
      wire.end();
      expect(log).toEqual([
        'connected 100000abcdef 6000',
        'create: CONNECTION_LOSS[-4]',
        'disconnected',
      ]);
    }
  });

  it('ends a session the servers call expired (timeout 0), answering what was queued', async () => {
    const { wire, log, send, nextSocket } = harness();
    wire.start();
    const socket = await nextSocket();
    send('queued', OP.GET_DATA, encodePathWatch(0, OP.GET_DATA, '/app/x', false));
    socket.open();
    socket.feed([connectResponse(0, false)]);
    await new Promise(setImmediate);
    expect(log).toEqual(['queued: SESSION_EXPIRED[-112]', 'expired', 'ended']);
  });

  it('re-registers every watch on a reconnect, its paths under the chroot, behind the ConnectRequest', async () => {
    const { wire, watch, nextSocket } = harness();
    wire.start();
    const first = await nextSocket();
    first.open();
    first.feed([connectResponse(6000, false)]);
    watch('data', '/locks/b');
    watch('child', '/locks');
    watch('child', '/');
    first.destroy();
    const second = await nextSocket();
    second.open();
    const connectRequest = 4 + 4 + 8 + 4 + 8 + 4 + 16 + 1;
    expect(second.written).toHaveLength(1); // one write: ConnectRequest, then SetWatches
    expect(second.written[0].subarray(connectRequest)).toEqual(
      frame(
        int(-8), // SetWatches' xid
        int(OP.SET_WATCHES),
        long(0n), // relative to the last zxid seen: none yet
        int(1),
        str('/app/locks/b'),
        int(0),
        int(2),
        str('/app/locks'),
        str('/app'), // the chroot's own node for '/'
      ),
    );
    wire.end();
  });

  it('connects again after a close cut before its answer, and ends once a close is answered', async () => {
    const { wire, log, sockets, nextSocket } = harness();
    wire.start();
    const first = await nextSocket();
    first.open();
    first.feed([connectResponse(6000, false)]);
    wire.closeSession();
    first.destroy(); // reset with the close written: the server may never have read it
    const second = await nextSocket();
    expect(sockets).toHaveLength(2);
    expect(log).toEqual([`connected ${SESSION_ID.toString(16)} 6000`]);
    second.open();
    second.feed([connectResponse(6000, false)]);
    wire.closeSession(); // as the session does on the handshake of a session it closes
    expect(second.written.at(-1)?.readInt32BE(8)).toBe(OP.CLOSE_SESSION);
    second.feed([reply(1, 20, 0)]); // answered: the server closed it, then closes the socket
    second.destroy();
    await new Promise(setImmediate);
    expect(log.slice(1)).toEqual([`connected ${SESSION_ID.toString(16)} 6000`, 'ended']);
    expect(sockets).toHaveLength(2);
  });

  it('numbers requests 0, 1, ... up to 2^31-2, then 1 again', async () => {
    const { wire, sockets, send, nextSocket } = harness();
    wire.start();
    const socket = await nextSocket();
    socket.open();
    socket.feed([connectResponse(6000, false)]);
    wire.startXidsAt(MAX_XID - 2);
    for (let i = 0; i < 3; i++)
      send(`r${i}`, OP.EXISTS, encodePathWatch(0, OP.EXISTS, '/app', false));
    const frames = Buffer.concat(sockets[0].written.slice(1));
    const xids = [0, 1, 2].map((i) => frames.readInt32BE((i * frames.length) / 3 + 4));
    expect(xids).toEqual([MAX_XID - 2, MAX_XID - 1, 1]);
    wire.end();
  });

  it('decodes every error code of ZooKeeper 3.9, and any other, without throwing', async () => {
    const codes = [...ZOOKEEPER_CODES.filter((c) => c !== 0), -126, -9999];
    const { wire, log, send, nextSocket } = harness();
    wire.start();
    const socket = await nextSocket();
    socket.open();
    socket.feed([connectResponse(6000, false)]);
    codes.forEach((code, i) =>
      send(`r${i}`, OP.GET_DATA, encodePathWatch(0, OP.GET_DATA, '/app', false)),
    );
    socket.feed([Buffer.concat(codes.map((code, i) => reply(i, 1, code)))]);
    expect(log.slice(1)).toEqual(codes.map((code, i) => `r${i}: ${codeName(code)}[${code}]`));
    expect(codeName(-9999)).toBe('UNKNOWN_CODE');
    expect(wire.connected).toBe(true);
    wire.end();
  });

  it('writes the AUTH packets behind the ConnectRequest and never shows them (util.inspect)', async () => {
    const secret = 'pw';
    const [auth] = ZkCredentials.from({ auth: `a:${secret}` }).authPackets();
    const sockets: StandInSocket[] = [];
    const wire = new ZkWire({
      target: { servers: [{ host: 'zk1', port: 2181 }] },
      sessionTimeoutMs: 9000,
      authPackets: [auth],
      handlers: {
        connected: () => undefined,
        disconnected: () => undefined,
        expired: () => undefined,
        authFailed: () => undefined,
        answered: () => undefined,
        socketFailed: () => undefined,
        mayConnect: () => true,
        ended: () => undefined,
      },
      openSocket: () => {
        sockets.push(new StandInSocket());
        return sockets[0] as unknown as Socket;
      },
    });
    wire.start();
    for (let i = 0; i < 100 && sockets.length === 0; i++) await new Promise(setImmediate);
    sockets[0].open();
    expect(Buffer.concat(sockets[0].written).includes(auth)).toBe(true);
    // A Buffer shows as hex bytes; the AUTH packet is short enough to show whole.
    const hex = Buffer.from(`a:${secret}`).toString('hex').match(/../g)!.join(' ');
    const shown = inspect(wire, { depth: Infinity, showHidden: true });
    expect(shown).not.toContain(hex);
    expect(inspect(auth)).toContain(hex);
    wire.end();
  });

  it('names every watch event type', () => {
    expect(
      Object.keys(EVENT_NAMES)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([-1, 1, 2, 3, 4, 5, 6, 7]);
  });
});
