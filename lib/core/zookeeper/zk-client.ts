/** Owns ZooKeeper's records as the engine sees them: Stat, watch events, create modes, ACLs. */
import type { ParsedConnectionString, ZkServerAddress } from '../connection-string';

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

export type { ZkServerAddress };

/** A connection string read: its servers, and the chroot every path is sent under, if any. */
export type ConnectionTarget = ParsedConnectionString;
