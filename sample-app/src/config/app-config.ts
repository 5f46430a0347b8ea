import { isAbsolute, join, resolve } from 'node:path';

export type DatabaseConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** Injection token of the app's AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** Everything the app reads from its environment, checked once at start-up. */
export interface AppConfig {
  /** PORT, default 3000. */
  port: number;
  /** HOST to listen on, default 0.0.0.0 (all interfaces, as in a container). */
  host: string;
  /** ZK_CONNECT, default 127.0.0.1:2181. */
  zkConnect: string;
  /** ZK_NAMESPACE: optional path prefix of every lock, e.g. /inventory. */
  zkNamespace?: string;
  /** ZK_SESSION_TIMEOUT_MS, default 10000: a paused holder loses its locks after this long. */
  sessionTimeoutMs: number;
  /** LOCK_WAIT_TIMEOUT_MS, default 30000: how long a request queues for a product lock. */
  lockWaitTimeoutMs: number;
  /** STOCK_IO_DELAY_MS, default 20: the awaited "payment" call between reading and writing stock. */
  stockIoDelayMs: number;
  /** DATABASE_URL: unset = SQLite under .data/, `sqlite:<file>`, or `postgres://...`. */
  database: DatabaseConfig;
  /** LOG_LEVEL: error, warn, log (default) or debug (each lock acquire/release and order step). */
  logLevel: string;
  /** INSTANCE_NAME, recorded in lock nodes so `inspect` shows which instance holds a lock. */
  instanceName: string;
}

/** The project's data folder (gitignored): the default SQLite file lives there. */
export const DATA_DIR = resolve(__dirname, '..', '..', '..', '.data');
export const DEFAULT_SQLITE_FILE = join(DATA_DIR, 'inventory.sqlite');

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  return {
    port: integer(env, 'PORT', 3000, 0),
    host: env.HOST || '0.0.0.0',
    zkConnect: env.ZK_CONNECT || '127.0.0.1:2181',
    zkNamespace: env.ZK_NAMESPACE || undefined,
    sessionTimeoutMs: integer(env, 'ZK_SESSION_TIMEOUT_MS', 10_000, 1),
    lockWaitTimeoutMs: integer(env, 'LOCK_WAIT_TIMEOUT_MS', 30_000, 1),
    stockIoDelayMs: integer(env, 'STOCK_IO_DELAY_MS', 20, 0),
    database: parseDatabaseUrl(env.DATABASE_URL),
    logLevel: env.LOG_LEVEL || 'log',
    instanceName: env.INSTANCE_NAME || `sample-app-${process.pid}`,
  };
}

export function parseDatabaseUrl(url: string | undefined): DatabaseConfig {
  if (!url) return { kind: 'sqlite', file: DEFAULT_SQLITE_FILE };
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file)
      throw new Error('DATABASE_URL "sqlite:" names no file: use sqlite:<path/to/file.sqlite>.');
    return { kind: 'sqlite', file: isAbsolute(file) ? file : resolve(file) };
  }
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  throw new Error(
    `DATABASE_URL (${whereUrlPoints(url)}) is not supported: leave it unset (SQLite under ` +
      '.data/), or use sqlite:<file> or postgres://user@host:port/db.',
  );
}

/**
 * A database URL as messages show it: its scheme and host only. The user, the password and the
 * query (`?password=`) never reach a log; a value not of the form scheme://host is not shown.
 */
function whereUrlPoints(url: string): string {
  const parts = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
  if (!parts) return 'not of the form scheme://host, so not shown';
  const [, scheme, authority] = parts;
  return `${scheme}://${authority.slice(authority.lastIndexOf('@') + 1)}`;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name}="${raw}" must be an integer >= ${min} (default ${fallback}).`);
  }
  return value;
}
