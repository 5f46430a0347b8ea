/**
 * Issue #19 §6: a lock lost during an outage left its empty lock path behind. The server restores
 * the old session from its log when it restarts and keeps the lost holder's node until it expires
 * that session, a session timeout later; released before then, the node stayed (nobody deletes
 * it: its session is no longer ours) and cleanup found the path in use and never came back. The
 * session timeout is long enough that the new session is up well before the old one expires, so
 * the release meets the node still there on any machine (with 4 s it did only on a fast one).
 */
import { LockLostError, ZkLockClient } from '../../lib';
import { scaled } from '../support/time-scale';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { eventually, testRoot, ZkAdmin } from './support/zk-admin';

describe('a lock lost during an outage', () => {
  const root = testRoot('lost-cleanup');
  let server: ZooKeeperServer;
  let locks: ZkLockClient;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      namespace: root,
      sessionTimeoutMs: 12_000,
      connectTimeoutMs: 60_000,
      parentCleanupDelayMs: 100,
    });
  });

  afterAll(async () => {
    await locks.close();
    await server.stop(); // this file's own server: its data goes with it
  });

  it('leaves no empty lock path once ZooKeeper is back', async () => {
    const lock = await locks.acquire('/order-1');
    await server.members[0].stop();
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve));
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    server.members[0].start();
    await server.members[0].waitServing();
    // The server restored the old session from its log: its node stays until the server
    // expires it, a session timeout after its start. Released now, cleanup finds it still there.
    await eventually('a new session', () => locks.state === 'RECONNECTED', scaled(60_000));
    await lock.release();
    const admin = await ZkAdmin.connect(server.connectionString);
    try {
      await eventually(
        'the lock path is removed',
        async () => !(await admin.exists(`${root}/order-1`)),
        scaled(30_000),
      );
    } finally {
      admin.close();
    }
  });
});
