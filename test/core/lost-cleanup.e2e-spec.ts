/**
 * What a holder lost during an outage leaves behind once ZooKeeper is back.
 *
 * A lock lost during an outage must not leave its empty lock path behind. The server restores
 * the old session from its log when it restarts and keeps the lost holder's node until it expires
 * that session, a session timeout later; released before then, the node stays unless the release
 * deletes it (nobody else does: its session is no longer ours), and cleanup finds the path in use
 * and never comes back. The session timeout is long enough that the new session is up well
 * before the old one expires, so the release meets the node still there on any machine (with 4 s
 * it does only on a fast one).
 *
 * A semaphore lease lost the same way must not keep its node: a release that skips the delete
 * for a session lost by our clock leaves the next client waiting for the server to expire the old
 * session. The outage there lasts past the lost session's own attempts to close itself on the
 * server (a session timeout after the loss), so only the release can delete the node.
 */
import type { TestContext } from 'vitest';
import { LockLostError, ZkLockClient, type SemaphoreLease } from '../../lib';
import { scaled } from '../support/time-scale';
import { ZooKeeperServer } from '../support/zookeeper';
import { eventually, testRoot, ZkAdmin } from './support/zk-admin';

/**
 * A server of the test's own (it stops and restarts it) and a client on it with a session long
 * enough that its new session is up well before the server expires the old one; both go after
 * the test, the server printing the end of its log first if the test failed.
 */
async function serverAndClient(
  root: string,
  { onTestFinished, task }: TestContext,
): Promise<{ server: ZooKeeperServer; locks: ZkLockClient }> {
  const server = await ZooKeeperServer.start();
  onTestFinished(async () => {
    if (task.result?.state === 'fail') server.printLogTails(`test "${task.name}" failed`);
    await server.stop(); // this test's own server: its data goes with it
  });
  const locks = await ZkLockClient.connect({
    connectionString: server.connectionString,
    namespace: root,
    sessionTimeoutMs: 12_000,
    connectTimeoutMs: 60_000,
    parentCleanupDelayMs: 100,
  });
  onTestFinished(() => locks.close());
  return { server, locks };
}

// The two run at once, each on a server of its own: each waits out session timeouts.
describe.concurrent('a lock lost during an outage', () => {
  const root = testRoot('lost-cleanup');

  it('leaves no empty lock path once ZooKeeper is back', async (context) => {
    const { server, locks } = await serverAndClient(root, context);
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

  it('deletes a lease lost during an outage when it is released after the reconnect', async (context) => {
    const { server, locks } = await serverAndClient(root, context);
    const semaphore = locks.semaphore('/stock-1', { maxLeases: 1 });
    const lease: SemaphoreLease = await semaphore.acquire();
    const leasesNode = `${root}/stock-1/leases`;
    // An admin session of its own on each side of the outage: the outage can outlast the
    // admin's session timeout on a loaded machine, and its client does not open a new session.
    const before = await ZkAdmin.connect(server.connectionString);
    try {
      expect(await before.children(leasesNode)).toHaveLength(1);
    } finally {
      before.close();
    }
    let admin: ZkAdmin | undefined;
    let other: ZkLockClient | undefined;
    try {
      await server.members[0].stop();
      await new Promise((resolve) => lease.signal.addEventListener('abort', resolve));
      expect(lease.signal.reason).toMatchObject({ reason: 'connection-lost' });
      // The outage outlasts the lost session's attempts to close itself on the server (a session
      // timeout after the loss): the restarted server restores the old session and its node.
      const lostAt = Date.now();
      await eventually(
        'the outage outlasts the lost session',
        () => Date.now() - lostAt > 14_000,
        scaled(30_000),
      );
      server.members[0].start();
      await server.members[0].waitServing();
      await eventually('a new session', () => locks.state === 'RECONNECTED', scaled(60_000));
      await lease.release();
      // The release deleted the node through the new session, before it resolved.
      admin = await ZkAdmin.connect(server.connectionString);
      expect(await admin.children(leasesNode)).toEqual([]);
      other = await ZkLockClient.connect({
        connectionString: server.connectionString,
        namespace: root,
        sessionTimeoutMs: 12_000,
      });
      const next = await other.semaphore('/stock-1', { maxLeases: 1 }).tryAcquire();
      expect(next).not.toBeNull();
      await next?.release();
    } finally {
      await other?.close();
      admin?.close();
    }
  });
});
