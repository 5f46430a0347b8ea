/**
 * Prints the ZooKeeper requests, replies and watch notifications of a few lock operations,
 * with times relative to each operation's start: where an operation's round trips go.
 *   ZK_CONNECT=127.0.0.1:2181 npx ts-node --transpile-only bench/request-trace.ts [callers=1] [ops=3]
 *   ... bench/request-trace.ts handoff [ops=5]: a handoff between two sessions (A releases, B
 *   waits), from A's release() call.
 * The clients connect through a TCP proxy in this process that decodes the frames of each
 * connection as they pass (our wire is not touched): times are when the proxy saw a frame, so
 * each round trip reads a little longer than without it. Lines are kept in memory and printed
 * at the end, so the printing does not slow what is measured. Without ZK_CONNECT a server is
 * started and stopped.
 */
import { randomUUID } from 'node:crypto';
import { AddressInfo, Server, Socket, connect, createServer } from 'node:net';
import { ZkLockClient } from '../lib/core';
import { OP, XID } from '../lib/core/zookeeper/jute';
import { zooKeeperFromEnv } from '../test/support/zookeeper';

/** ZooKeeper's op codes by number (OP, plus the ones the library never sends). */
const OP_NAMES: Record<number, string> = {
  ...Object.fromEntries(Object.entries(OP).map(([name, code]) => [code, name])),
  7: 'SET_ACL',
  8: 'GET_CHILDREN',
  9: 'SYNC',
  15: 'CREATE2',
  20: 'DELETE_CONTAINER',
  21: 'CREATE_TTL',
  105: 'SET_WATCHES2',
  106: 'ADD_WATCH',
};
/** Requests whose record starts with a path (ustring), and those that then carry a watch flag. */
const WITH_PATH = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 19, 20, 21]);
const WITH_WATCH = new Set([3, 4, 8, 12]);
const EVENTS: Record<number, string> = {
  1: 'NODE_CREATED',
  2: 'NODE_DELETED',
  3: 'NODE_DATA_CHANGED',
  4: 'NODE_CHILDREN_CHANGED',
};

let origin = process.hrtime.bigint();
const lines: string[] = [];
let tracing = false;
const short = (path: string) => path.replace(/^\/bench-trace-[^/]+/, '');
const log = (line: string) => {
  if (!tracing) return;
  const ms = (Number(process.hrtime.bigint() - origin) / 1e6).toFixed(3).padStart(8);
  lines.push(`${ms} ms  ${line}`);
};
const mark = (line: string) => {
  origin = process.hrtime.bigint();
  if (tracing) lines.push(line);
};

/** Splits one direction of a connection into frames (an int32 length, then that many bytes). */
function frames(onFrame: (frame: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const end = 4 + pending.readInt32BE(0);
      onFrame(pending.subarray(0, end));
      pending = pending.subarray(end);
    }
  };
}

const pathAt = (frame: Buffer, at: number): string => {
  const length = frame.readInt32BE(at);
  return length < 0 ? '' : frame.toString('utf8', at + 4, at + 4 + length);
};

/**
 * A proxy in front of one server that logs every frame of every connection: requests by op,
 * path and watch flag, replies by the request they answer (and their error code), notifications
 * by event and path. Pings and their replies are left out.
 */
class TraceProxy {
  private readonly sockets = new Set<Socket>();
  private connections = 0;

  private constructor(private readonly server: Server) {}

  static async start(connectionString: string): Promise<TraceProxy> {
    const [host, port] = connectionString.split(',')[0].split('/')[0].split(':');
    const server = createServer();
    const proxy = new TraceProxy(server);
    server.on('connection', (client) => proxy.accept(client, host, Number(port)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get connectionString(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    const name = `s${this.connections++}`;
    const upstream = connect(port, host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.setNoDelay();
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    const sent = new Map<number, string>(); // xid -> what the request was
    let handshake = { up: true, down: true };
    client.on(
      'data',
      frames((frame) => {
        upstream.write(frame);
        if (handshake.up)
          return void ((handshake = { ...handshake, up: false }), log(`${name} -> CONNECT`));
        const xid = frame.readInt32BE(4);
        const type = frame.readInt32BE(8);
        if (type === OP.PING) return;
        let what = OP_NAMES[type] ?? `op ${type}`;
        if (WITH_PATH.has(type)) what += ` ${short(pathAt(frame, 12))}`;
        if (WITH_WATCH.has(type) && frame[frame.length - 1] === 1) what += ' +watch';
        sent.set(xid, what);
        log(`${name} -> ${what}`);
      }),
    );
    upstream.on(
      'data',
      frames((frame) => {
        client.write(frame);
        if (handshake.down)
          return void ((handshake = { ...handshake, down: false }), log(`${name} <- CONNECTED`));
        const xid = frame.readInt32BE(4);
        const err = frame.readInt32BE(16);
        if (xid === XID.PING) return;
        if (xid === XID.NOTIFICATION) {
          const event = frame.readInt32BE(20);
          return log(`${name} <= ${EVENTS[event] ?? `event ${event}`} ${short(pathAt(frame, 28))}`);
        }
        const what = sent.get(xid) ?? `xid ${xid}`;
        sent.delete(xid);
        log(`${name} <- ${what}${err ? ` ERROR ${err}` : ''}`);
      }),
    );
  }
}

/** A holds /h, B waits for it; A releases: where the time goes until B holds. */
async function traceHandoff(connectionString: string, namespace: string, ops: number) {
  const a = await ZkLockClient.connect({ connectionString, namespace });
  const b = await ZkLockClient.connect({ connectionString, namespace });
  try {
    await a.withLock('/warm', () => undefined);
    for (let n = 0; n < ops; n++) {
      tracing = false;
      const held = await a.acquire('/h');
      const waiting = b.acquire('/h');
      await new Promise((resolve) => setTimeout(resolve, 50)); // B's watch is set by then
      tracing = true;
      mark(`--- op ${n + 1}: A releases /h, B waits`);
      const released = held.release();
      const granted = await waiting;
      log('   B holds');
      await released;
      await granted.release();
    }
  } finally {
    tracing = false; // closing's requests are not part of it
    await a.close();
    await b.close();
  }
}

/** `callers` callers take /k at once, `ops` times: every frame of each round. */
async function traceCallers(
  connectionString: string,
  namespace: string,
  callers: number,
  ops: number,
) {
  const client = await ZkLockClient.connect({ connectionString, namespace });
  try {
    await client.withLock('/warm', () => undefined);
    tracing = true;
    for (let n = 0; n < ops; n++) {
      mark(`--- op ${n + 1}: ${callers} caller(s) on /k`);
      await Promise.all(
        Array.from({ length: callers }, (_, i) =>
          client.withLock('/k', async () => {
            log(`   caller ${i} holds`);
            await new Promise((resolve) => setImmediate(resolve));
          }),
        ),
      );
      log('   all released');
    }
  } finally {
    tracing = false;
    await client.close();
  }
}

async function main(): Promise<void> {
  const { connectionString, server } = await zooKeeperFromEnv();
  const proxy = await TraceProxy.start(connectionString);
  const namespace = `/bench-trace-${randomUUID().slice(0, 8)}`;
  try {
    if (process.argv[2] === 'handoff') {
      await traceHandoff(proxy.connectionString, namespace, Number(process.argv[3] ?? 5));
    } else {
      const callers = Number(process.argv[2] ?? 1);
      await traceCallers(proxy.connectionString, namespace, callers, Number(process.argv[3] ?? 3));
    }
    console.log(lines.join('\n'));
  } finally {
    await proxy.close();
    await server?.stop();
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? String(error));
  process.exitCode = 1;
});
