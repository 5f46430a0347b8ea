/** Owns the typed view of node-zookeeper-client 1.1.3's public API. */
/**
 * node-zookeeper-client 1.1.3, typed: the parts the adapter uses (the package ships no types, and
 * its @types are incomplete). A module of ours, not an ambient `declare module`, so the .d.ts we
 * ship name these types and never the untyped package (docs/design.md "The published package").
 * Everything in lib reaches the client through this file.
 */
import type { EventEmitter } from 'node:events';

export interface Stat {
  czxid: Buffer;
  mzxid: Buffer;
  ephemeralOwner: Buffer;
  version: number;
  cversion: number;
  numChildren: number;
}

export interface WatcherEvent {
  type: number;
  name: string;
  path: string;
  getType(): number;
}

export type Watcher = (event: WatcherEvent) => void;

export interface Client extends EventEmitter {
  connectionManager: any;
  connect(): void;
  close(): void;
  getSessionId(): Buffer;
  getSessionTimeout(): number;
  getState(): { name: string; code: number };
  create(
    path: string,
    data: Buffer | null,
    acls: unknown[],
    mode: number,
    cb: (err: any, path: string) => void,
  ): void;
  remove(path: string, version: number, cb: (err: any) => void): void;
  getACL(
    path: string,
    cb: (err: any, acls: Array<{ permission: number; id: { scheme: string; id: string } }>) => void,
  ): void;
  setData(path: string, data: Buffer, version: number, cb: (err: any) => void): void;
  exists(
    path: string,
    watcher: Watcher | undefined,
    cb: (err: any, stat: Stat | null) => void,
  ): void;
  getData(
    path: string,
    watcher: Watcher | undefined,
    cb: (err: any, data: Buffer | null, stat: Stat) => void,
  ): void;
  getChildren(
    path: string,
    watcher: Watcher | undefined,
    cb: (err: any, children: string[], stat: Stat) => void,
  ): void;
}

interface ClientPackage {
  createClient(connectionString: string, options?: Record<string, unknown>): Client;
  ACL: { OPEN_ACL_UNSAFE: unknown[]; CREATOR_ALL_ACL: unknown[] };
  CreateMode: {
    PERSISTENT: number;
    EPHEMERAL: number;
    PERSISTENT_SEQUENTIAL: number;
    EPHEMERAL_SEQUENTIAL: number;
  };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const clientPackage = require('node-zookeeper-client') as ClientPackage;

export const { createClient, ACL, CreateMode } = clientPackage;

/** The client's own path check: an AssertionError, thrown synchronously, as its methods do. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pathModule = require('node-zookeeper-client/lib/Path.js') as {
  validate(path: string): void;
};

export const validatePath = pathModule.validate;
