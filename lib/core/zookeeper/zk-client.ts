/** Owns ZooKeeper's records as the engine sees them: Stat, watch events, create modes, ACLs, paths. */
import { AssertionError } from 'node:assert';
import {
  parseConnectionString,
  type ParsedConnectionString,
  type ZkServerAddress,
} from '../connection-string';

/** The fields of ZooKeeper's Stat the engine reads (its longs as 8-byte big-endian Buffers). */
export interface Stat {
  czxid: Buffer;
  mzxid: Buffer;
  ephemeralOwner: Buffer;
  version: number;
  cversion: number;
  numChildren: number;
}

/** A watch notification: its type (Watcher.Event.EventType), that type's name, the node's path. */
export interface WatcherEvent {
  type: number;
  name: string;
  path: string;
}

export type Watcher = (event: WatcherEvent) => void;

/** ZooKeeper's CreateMode flags. */
export const CreateMode = {
  PERSISTENT: 0,
  EPHEMERAL: 1,
  PERSISTENT_SEQUENTIAL: 2,
  EPHEMERAL_SEQUENTIAL: 3,
} as const;

/** An ACL entry (ZooKeeper's ACL record: permissions, then the id's scheme and id). */
export interface AclEntry {
  permission: number;
  id: { scheme: string; id: string };
}

/** ZooDefs.Perms.ALL. */
const ALL = 31;

/** ZooDefs.Ids' two ACLs: anyone may do anything, or only the creating identity (auth scheme). */
export const ACL: { OPEN_ACL_UNSAFE: readonly AclEntry[]; CREATOR_ALL_ACL: readonly AclEntry[] } = {
  OPEN_ACL_UNSAFE: [{ permission: ALL, id: { scheme: 'world', id: 'anyone' } }],
  CREATOR_ALL_ACL: [{ permission: ALL, id: { scheme: 'auth', id: '' } }],
};

function check(ok: boolean, message: string): void {
  if (!ok) throw new AssertionError({ message });
}

/**
 * The shape check every path gets before it is sent (an AssertionError, thrown synchronously):
 * absolute, no trailing `/`, no empty or relative segment. The engine checks the full rules of
 * ZooKeeper's PathUtils itself (paths.ts); this guards the session's own callers.
 */
export function validatePath(path: string): void {
  check(!!path && typeof path === 'string', 'Node path must be a non-empty string.');
  check(path[0] === '/', 'Node path must start with / character.');
  if (path.length === 1) return;
  check(path[path.length - 1] !== '/', 'Node path must not end with / character.');
  check(!/\/\//.test(path), 'Node path must not contain empty node name.');
  check(!/\/\.(\.)?(\/|$)/.test(path), 'Node path must not contain relative path(s).');
}

export type { ZkServerAddress };

/** A connection string read: its servers, and the chroot every path is sent under, if any. */
export type ConnectionTarget = ParsedConnectionString;

/**
 * The connection string as connection-string.ts reads and checks it (an AssertionError naming
 * the bad part when it is not usable: the client's options check has told users the same at
 * connect), its chroot checked as every path is. The servers are shuffled, as every ZooKeeper
 * client does, so that clients of one connection string spread over the ensemble.
 */
export function connectionTarget(connectionString: string): ConnectionTarget {
  const read = parseConnectionString(connectionString);
  if (!read.ok) throw new AssertionError({ message: `connectionString: ${read.reason}.` });
  const { servers, chroot } = read.parsed;
  if (chroot !== undefined) validatePath(chroot);
  for (let i = servers.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [servers[i], servers[j]] = [servers[j], servers[i]];
  }
  return { servers, chroot };
}
