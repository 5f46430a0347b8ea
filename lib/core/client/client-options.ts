// The client's option defaults and checks, in one place.
import { hostname } from 'node:os';
import { MAX_WAIT_MS } from '../engine/waiter-queue';
import { parseConnectionString, withoutUserInfo } from '../connection-string';
import { InvalidLockOptionsError } from '../errors';
import { applyNamespace } from '../paths';
import type { ZkLockClientOptions } from '../types';
import type { ZkCredentials } from '../zookeeper/zk-credentials';

/** The longest wait a Node timer allows (the engine's bound), for option checks. */
export { MAX_WAIT_MS };

/** The client's defaults, in one place (docs/reference/options.md lists them). */
export const CLIENT_DEFAULTS = {
  sessionTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  parentCleanupDelayMs: 2_000,
  maxNodesPerPath: 2,
  sessions: 1,
  maxWaitersPerPath: 1_000,
  maxWaiters: 10_000,
} as const;

/**
 * The caps on waiting callers (`maxWaitersPerPath`, `maxWaiters`): each costs well under 4 KB
 * (test/soak) for as long as the lock is busy, so callers faster than the lock would grow the heap
 * without bound. 1,000 on one path is more than a lock held 10 ms serves in 10 s; 10,000 in all is
 * at most tens of MB.
 */
const WAITER_CAPS = ['maxWaitersPerPath', 'maxWaiters'] as const;

/**
 * Most sessions one client may keep (option `sessions`): a server refuses one IP's connections
 * beyond maxClientCnxns (60 by default), and 16 leaves room for three such clients per host and
 * others (docs/design.md "Sessions as a pool").
 */
export const MAX_SESSIONS = 16;

/**
 * The most bytes of data a lock or lease node may carry (`host`, `pid`, `nodeData`), checked when
 * the client is made: with the path, ACL and headers a create stays under the server's
 * `jute.maxbuffer` (MAX_REQUEST_BYTES; docs/reference/options.md "Size limits").
 */
export const MAX_NODE_DATA_BYTES = 1_000_000;

/** The data of every lock and lease node a client creates: its host, pid and `nodeData`. */
export function lockNodeData(nodeData: ZkLockClientOptions['nodeData']): Buffer {
  return Buffer.from(JSON.stringify({ host: hostname(), pid: process.pid, ...nodeData }));
}

/** Durations in ms: a whole number from `min` to a Node timer's limit. */
const DURATIONS = {
  sessionTimeoutMs: 1,
  connectTimeoutMs: 1,
  requestTimeoutMs: 1,
  parentCleanupDelayMs: 0,
} as const;

/**
 * Checks the client's options before anything connects, naming the option, what it must be and
 * the value given (ZkCredentials checks `auth`, `acl`, `tls` without showing them). `subject`:
 * the call they were given to (`ZkLockClient.connect()`, `ZkLockModule.forRoot()`).
 */
export function checkClientOptions(options: ZkLockClientOptions, subject: string): void {
  const fail = (option: string, rule: string, hint: string): never => {
    const value = (options as unknown as Record<string, unknown>)[option];
    throw new InvalidLockOptionsError(subject, `${option} ${rule}, got ${show(value)}`, hint);
  };
  if (typeof options !== 'object' || options === null) {
    throw new InvalidLockOptionsError(
      subject,
      `the options must be an object, got ${show(options)}`,
      'Pass { connectionString }',
    );
  }
  const { connectionString, maxNodesPerPath, nodeData, namespace, sessions, onWarning } = options;
  if (typeof connectionString !== 'string' || connectionString.trim() === '') {
    fail(
      'connectionString',
      'must be "host:port[,host:port...]"',
      'Give the ZooKeeper ensemble, e.g. "zk1:2181,zk2:2181"',
    );
  }
  const parsed = parseConnectionString(connectionString);
  if (!parsed.ok) {
    // Not the value: it may carry a password (parseConnectionString names the part instead).
    throw new InvalidLockOptionsError(
      subject,
      `connectionString is not "host:port[,host:port...][/chroot]": ${parsed.reason}`,
      'Give the ZooKeeper ensemble, e.g. "zk1:2181,zk2:2181" or "zk1:2181/my-app"; ' +
        "credentials go in the auth option ('user:password')",
    );
  }
  for (const [option, min] of Object.entries(DURATIONS)) {
    const ms = (options as unknown as Record<string, unknown>)[option];
    if (ms === undefined) continue;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < min || ms > MAX_WAIT_MS) {
      fail(
        option,
        `must be a whole number of milliseconds from ${min} to ${MAX_WAIT_MS}`,
        `Give it in milliseconds, e.g. ${option}: 10_000, or leave it out for the default`,
      );
    }
  }
  if (
    maxNodesPerPath !== undefined &&
    !(Number.isInteger(maxNodesPerPath) && maxNodesPerPath >= 1)
  ) {
    fail(
      'maxNodesPerPath',
      'must be a whole number >= 1',
      `Leave it out for the default (${CLIENT_DEFAULTS.maxNodesPerPath})`,
    );
  }
  for (const option of WAITER_CAPS) {
    const cap = options[option];
    if (cap !== undefined && !(Number.isInteger(cap) && cap >= 1)) {
      fail(
        option,
        'must be a whole number >= 1',
        `Leave it out for the default (${CLIENT_DEFAULTS[option]})`,
      );
    }
  }
  if (
    sessions !== undefined &&
    !(Number.isInteger(sessions) && sessions >= 1 && sessions <= MAX_SESSIONS)
  ) {
    fail(
      'sessions',
      `must be a whole number from 1 to ${MAX_SESSIONS}`,
      `Leave it out for the default (${CLIENT_DEFAULTS.sessions}); each session is one more ` +
        "connection to ZooKeeper and counts against the servers' maxClientCnxns",
    );
  }
  if (onWarning !== undefined && typeof onWarning !== 'function') {
    fail(
      'onWarning',
      'must be a function of the message',
      'Give (message) => logger.warn(message), or leave it out for a Node process warning',
    );
  }
  if (nodeData !== undefined && !isRecordOfScalars(nodeData)) {
    fail(
      'nodeData',
      'must be an object of strings and numbers',
      "Give fields such as { app: 'orders' }",
    );
  }
  checkNodeDataSize(nodeData, subject);
  if (namespace !== undefined) {
    if (typeof namespace !== 'string')
      fail('namespace', 'must be a path such as "/my-app"', 'Give an absolute path');
    if (namespace) applyNamespace(namespace, '/x');
  }
}

/** InvalidLockOptionsError when the lock nodes' data would be over MAX_NODE_DATA_BYTES. */
function checkNodeDataSize(nodeData: ZkLockClientOptions['nodeData'], subject: string): void {
  const bytes = lockNodeData(nodeData).length;
  if (bytes <= MAX_NODE_DATA_BYTES) return;
  throw new InvalidLockOptionsError(
    subject,
    `nodeData makes each lock node's data ${bytes} bytes (JSON, with host and pid), over the ` +
      `limit of ${MAX_NODE_DATA_BYTES} bytes: a ZooKeeper server drops the connection on a ` +
      'request longer than its jute.maxbuffer (0xfffff bytes by default)',
    'Record a reference (an id, a URL) in nodeData instead of the data itself',
  );
}

function isRecordOfScalars(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'string' || typeof v === 'number');
}

/** A value as an error message shows it: strings quoted, numbers as they are. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** The code of the process warning `connect()` emits for `auth` without `tls`. */
export const AUTH_WITHOUT_TLS = 'ZKLOCK_AUTH_WITHOUT_TLS';

/**
 * Warns once at connect when digest credentials go without TLS: the digest scheme sends the
 * password as plain bytes, readable by anyone on the network path.
 */
export function warnOfPlainTextAuth(
  options: ZkLockClientOptions,
  credentials: ZkCredentials,
): void {
  if (credentials.authCount === 0 || credentials.usesTls) return;
  const message =
    `auth is set without tls: ZooKeeper's digest scheme sends the password to ` +
    `"${withoutUserInfo(options.connectionString)}" as plain bytes, readable on the network ` +
    "path. Set tls (the servers' secureClientPort), or keep the servers on a network only " +
    'trusted hosts reach (docs/guides/security.md)';
  warnOf(options, message, AUTH_WITHOUT_TLS);
}

/** The code of the process warning `connect()` emits for a namespace open to other identities. */
export const NAMESPACE_ACL = 'ZKLOCK_NAMESPACE_ACL';

/** A warning of connect(): to `onWarning` when given, else a Node process warning with `code`. */
export function warnOf(options: ZkLockClientOptions, message: string, code: string): void {
  if (options.onWarning) options.onWarning(message);
  else process.emitWarning(message, { code });
}
