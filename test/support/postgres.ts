/**
 * A real PostgreSQL server for tests and the demo: a throw-away cluster in a temp folder on a free
 * loopback port, started from Debian's packages (installed once when missing and we are root).
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user.
 * Never used by lib/: this is project tooling.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './zookeeper';
import { scaled } from './time-scale';
import { startWatchdog } from './watchdog';

const DEBIAN_ROOT = '/usr/lib/postgresql';

interface RunAs {
  uid?: number;
  gid?: number;
}

/** The bin folder of the newest installed Debian PostgreSQL, installing it when we may. */
export function findPostgresBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const found = newestBin();
  if (found) return found;
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    throw new Error(
      'PostgreSQL not found. Install it (Debian/Ubuntu: `sudo apt-get install postgresql`), ' +
        'or set PG_BIN to its bin folder, or set DATABASE_URL=postgres://... to use a running server.',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  process.stderr.write('[postgres] installing Debian package "postgresql" (one time)...\n');
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'postgresql'], { stdio: 'ignore', env });
  const installed = newestBin();
  if (!installed)
    throw new Error(`apt-get installed postgresql but ${DEBIAN_ROOT}/*/bin is missing`);
  return installed;
}

function newestBin(): string | undefined {
  if (!existsSync(DEBIAN_ROOT)) return undefined;
  const versions = readdirSync(DEBIAN_ROOT)
    .filter((v) => existsSync(join(DEBIAN_ROOT, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(DEBIAN_ROOT, versions[0], 'bin') : undefined;
}

/** As root: the uid/gid of the `postgres` user (PostgreSQL will not run as root). */
function runAsPostgres(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

export class PostgresServer {
  private watchdog?: ChildProcess;

  private constructor(
    private readonly proc: ChildProcess,
    readonly port: number,
    readonly dataDir: string,
  ) {}

  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  get connectionString(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PostgresServer> {
    const bin = findPostgresBin();
    const runAs = runAsPostgres();
    const dataDir = mkdtempSync(join(tmpdir(), 'pg-'));
    if (runAs.uid !== undefined) chownSync(dataDir, runAs.uid, runAs.gid!);
    const env = { ...process.env, LC_ALL: 'C', HOME: dataDir };
    execFileSync(
      join(bin, 'initdb'),
      ['-D', join(dataDir, 'data'), '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync'],
      { ...runAs, env, stdio: 'ignore' },
    );
    const port = await freePort();
    const log = openSync(join(dataDir, 'server.log'), 'a');
    if (runAs.uid !== undefined) chownSync(join(dataDir, 'server.log'), runAs.uid, runAs.gid!);
    const proc = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        join(dataDir, 'data'),
        '-p',
        String(port),
        '-k',
        dataDir,
        '-c',
        'listen_addresses=127.0.0.1',
      ],
      { ...runAs, env, stdio: ['ignore', log, log] },
    );
    closeSync(log);
    const server = new PostgresServer(proc, port, dataDir);
    // SIGINT: PostgreSQL's fast shutdown, which also ends its worker processes.
    server.watchdog = startWatchdog(proc.pid!, 'INT');
    try {
      await server.waitReady();
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  private async waitReady(timeoutMs = scaled(120_000)): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running) {
        throw new Error(`PostgreSQL exited on start; see ${join(this.dataDir, 'server.log')}`);
      }
      const client = new Client({ connectionString: this.connectionString });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (err) {
        if (Date.now() > deadline) {
          throw new Error(
            `PostgreSQL on port ${this.port} not ready after ${timeoutMs} ms: ${err}`,
          );
        }
      } finally {
        await client.end().catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Fast shutdown (SIGINT), waits for the server to exit, removes the data folder. */
  async stop(): Promise<void> {
    this.watchdog?.kill('SIGKILL');
    this.watchdog = undefined;
    if (this.running) {
      const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
      this.proc.kill('SIGINT');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * A PostgreSQL connection string: PG_URL when set, else a new throw-away server
 * (returned so the caller can stop it).
 */
export async function postgresFromEnv(): Promise<{
  connectionString: string;
  server?: PostgresServer;
}> {
  if (process.env.PG_URL) return { connectionString: process.env.PG_URL };
  const server = await PostgresServer.start();
  return { connectionString: server.connectionString, server };
}
