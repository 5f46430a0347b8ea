/**
 * What the interop specs share: a peer process (Curator or kazoo), two of our clients (`ours`,
 * and `later` for a third contender), a ZkAdmin and a root path of the file's own; started
 * before the tests, stopped and removed after them.
 */
import { ZkLockClient } from '../../lib';
import { testRoot, ZkAdmin, zkConnectFromEnv } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';
import { scaled } from '../support/time-scale';

export interface InteropFixture {
  readonly root: string;
  peer: LockPeer;
  ours: ZkLockClient;
  later: ZkLockClient;
  admin: ZkAdmin;
  /** The children of `path` (the contenders ZooKeeper holds). */
  nodes(path: string): Promise<string[]>;
}

export function useInterop(
  name: string,
  start: (connect: string) => Promise<LockPeer>,
): InteropFixture {
  const fixture = {
    root: testRoot(name),
    nodes: (path: string) => fixture.admin.children(path),
  } as InteropFixture;
  beforeAll(async () => {
    const connect = zkConnectFromEnv();
    fixture.peer = await start(connect);
    fixture.ours = await ZkLockClient.connect({ connectionString: connect });
    fixture.later = await ZkLockClient.connect({ connectionString: connect });
    fixture.admin = await ZkAdmin.connect(connect);
  }, scaled(180_000));
  afterAll(async () => {
    await fixture.peer?.stop();
    await fixture.ours?.close();
    await fixture.later?.close();
    await fixture.admin?.removeTree(fixture.root);
    fixture.admin?.close();
  });
  return fixture;
}
