#!/usr/bin/env node
// The `zk-lock-dev-server` command: InMemoryZooKeeper on a port, for local development.
import { InMemoryZooKeeper } from './in-memory-zookeeper';

const USAGE =
  'usage: zk-lock-dev-server [--port <port>]   (default port 2181; 0 for any free port)';

/** What the command line asks for: the usage, a server on `port`, or nothing it can run. */
export type DevServerArgs =
  { kind: 'help' } | { kind: 'serve'; port: number } | { kind: 'wrong'; reason: string };

/**
 * Reads `[--port <n> | --port=<n>] [--help]`, port 2181 by default. Anything else is refused with
 * the reason, rather than run on a port the user did not ask for: an unknown argument, `--port`
 * without a value, a value that is not a whole number from 0 to 65535 (`""` is not 0).
 */
export function parseDevServerArgs(args: readonly string[]): DevServerArgs {
  let port = 2181;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--help') return { kind: 'help' };
    let value: string | undefined;
    if (arg === '--port') value = args[++i];
    else if (arg.startsWith('--port=')) value = arg.slice('--port='.length);
    else return { kind: 'wrong', reason: `unknown argument ${JSON.stringify(arg)}` };
    if (value === undefined) {
      return { kind: 'wrong', reason: '--port needs a value: a TCP port from 0 to 65535' };
    }
    if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) {
      return {
        kind: 'wrong',
        reason: `--port ${JSON.stringify(value)}: not a TCP port (a whole number from 0 to 65535)`,
      };
    }
    port = Number(value);
  }
  return { kind: 'serve', port };
}

/**
 * Runs the in-memory ZooKeeper on 127.0.0.1 until SIGINT or SIGTERM, says loudly that it is no
 * production server, and prints the connection string on a line of its own (`ZK_CONNECT=...`).
 */
async function main(): Promise<void> {
  const args = parseDevServerArgs(process.argv.slice(2));
  if (args.kind === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (args.kind === 'wrong') {
    process.stderr.write(`zk-lock-dev-server: ${args.reason}\n${USAGE}\n`);
    process.exitCode = 1;
    return;
  }
  const { port } = args;
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
