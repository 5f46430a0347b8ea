#!/usr/bin/env node
// The `zk-lock-dev-server` command: InMemoryZooKeeper on a port, for local development.
import { InMemoryZooKeeper } from './in-memory-zookeeper';

const USAGE = 'usage: zk-lock-dev-server [--port <port>]   (default port 2181)';

/** The port of `--port <n>` (default 2181); an error naming the bad value. */
export function devServerPort(args: readonly string[]): number {
  const at = args.indexOf('--port');
  if (at < 0) return 2181;
  const port = Number(args[at + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`--port ${args[at + 1] ?? ''}: not a TCP port (0 to 65535). ${USAGE}`);
  }
  return port;
}

/**
 * Runs the in-memory ZooKeeper on 127.0.0.1 until SIGINT or SIGTERM, says loudly that it is no
 * production server, and prints the connection string on a line of its own (`ZK_CONNECT=...`).
 */
async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const port = devServerPort(process.argv.slice(2));
  const server = await InMemoryZooKeeper.start({ port }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EADDRINUSE') throw err;
    throw new Error(
      `port ${port} of 127.0.0.1 is taken (a ZooKeeper already running?): pick another with --port`,
    );
  });
  process.stdout.write(
    'NOT FOR PRODUCTION: an in-memory ZooKeeper for local development and tests (one server, ' +
      'no disk: every lock and node is gone when it stops; no ACL checks; reachable from this ' +
      'machine only).\n' +
      'For a real ZooKeeper: docs/getting-started.md, "A ZooKeeper to talk to".\n' +
      `ZK_CONNECT=${server.connectionString}\n`,
  );
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`zk-lock-dev-server: ${err instanceof Error ? err.message : err}\n`);
    process.exit(1);
  });
}
