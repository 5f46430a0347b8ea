/**
 * Prints the ZooKeeper requests, replies and watch notifications of a few lock operations,
 * with times relative to each operation's start: where an operation's round trips go.
 *   ZK_CONNECT=127.0.0.1:2181 npx ts-node --transpile-only bench/request-trace.ts [callers=1] [ops=3]
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
const log = (line: string) => console.log(`${ms()} ms  ${line}`);

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

async function main(): Promise<void> {
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
