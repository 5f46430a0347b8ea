/**
 * Prints the ZooKeeper requests, replies and watch notifications of a few lock operations,
 * with times relative to each operation's start: where an operation's round trips go.
 *   ZK_CONNECT=127.0.0.1:2181 npx ts-node --transpile-only bench/request-trace.ts [callers=1] [ops=3]
 *   ... bench/request-trace.ts handoff [ops=5]: a handoff between two sessions (A releases, B
 *   waits), from A's release() call; lines are kept in memory and printed at the end, so the
 *   printing does not slow what is measured.
 * Tooling only: it patches node-zookeeper-client's prototypes in this process.
 */
import { randomUUID } from 'node:crypto';
import { ZkLockClient } from '../lib/core';
import { zooKeeperFromEnv } from '../test/support/zookeeper';

/* eslint-disable @typescript-eslint/no-require-imports */
const ConnectionManager = require('node-zookeeper-client/lib/ConnectionManager.js');
const WatcherManager = require('node-zookeeper-client/lib/WatcherManager.js');
const jute = require('node-zookeeper-client/lib/jute');
/* eslint-enable @typescript-eslint/no-require-imports */

const OP_NAMES = Object.fromEntries(Object.entries(jute.OP_CODES).map(([k, v]) => [v, k]));
let origin = process.hrtime.bigint();
const ms = () => (Number(process.hrtime.bigint() - origin) / 1e6).toFixed(3).padStart(8);
const short = (path: string | undefined) => (path ?? '').replace(/^\/bench-trace-[^/]+/, '');
let buffer: string[] | undefined;
const log = (line: string) => {
  const text = `${ms()} ms  ${line}`;
  if (buffer) buffer.push(text);
  else console.log(text);
};

function install(): void {
  const queue = ConnectionManager.prototype.queue;
  ConnectionManager.prototype.queue = function (request: any, callback: any) {
    const op = OP_NAMES[request.header?.type] ?? String(request.header?.type);
    if (op === 'PING') return queue.call(this, request, callback);
    const path = short(request.payload?.path);
    const watch = request.payload?.watch ? ' +watch' : '';
    log(`-> ${op} ${path}${watch}`);
    return queue.call(this, request, (error: any, response: any) => {
      log(`<- ${op} ${path}${error ? ` ERROR ${error.name ?? error}` : ''}`);
      callback?.(error, response);
    });
  };
  const emit = WatcherManager.prototype.emit;
  WatcherManager.prototype.emit = function (event: any) {
    log(`<= NOTIFICATION type=${event.type} ${short(event.path)}`);
    return emit.call(this, event);
  };
}

/** A holds /h, B waits for it; A releases: where the time goes until B holds. */
async function traceHandoff(connectionString: string, namespace: string, ops: number) {
  const a = await ZkLockClient.connect({ connectionString, namespace });
  const b = await ZkLockClient.connect({ connectionString, namespace });
  try {
    await a.withLock('/warm', () => undefined);
    install();
    buffer = [];
    for (let n = 0; n < ops; n++) {
      const held = await a.acquire('/h');
      const waiting = b.acquire('/h');
      await new Promise((resolve) => setTimeout(resolve, 50)); // B's watch is set by then
      origin = process.hrtime.bigint();
      buffer.push(`--- op ${n + 1}: A releases /h, B waits`);
      const released = held.release();
      const granted = await waiting;
      log('   B holds');
      await released;
      await granted.release();
    }
    console.log(buffer.filter((line) => !/<- DELETE|GET_DATA \/warm/.test(line)).join('\n'));
  } finally {
    buffer = []; // closing's requests are not part of it
    await a.close();
    await b.close();
  }
}

async function main(): Promise<void> {
  if (process.argv[2] === 'handoff') {
    const { connectionString, server } = await zooKeeperFromEnv();
    const namespace = `/bench-trace-${randomUUID().slice(0, 8)}`;
    try {
      return await traceHandoff(connectionString, namespace, Number(process.argv[3] ?? 5));
    } finally {
      await server?.stop();
    }
  }
  const callers = Number(process.argv[2] ?? 1);
  const ops = Number(process.argv[3] ?? 3);
  const { connectionString, server } = await zooKeeperFromEnv();
  const namespace = `/bench-trace-${randomUUID().slice(0, 8)}`;
  const client = await ZkLockClient.connect({ connectionString, namespace });
  try {
    await client.withLock('/warm', () => undefined);
    install();
    for (let n = 0; n < ops; n++) {
      origin = process.hrtime.bigint();
      console.log(`--- op ${n + 1}: ${callers} caller(s) on /k`);
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
    await client.close();
    await server?.stop();
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? String(error));
  process.exitCode = 1;
});
