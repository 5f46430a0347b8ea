/**
 * `tryAcquire()` ("no waiting") during an outage does not wait for a session (14.5 s here). With
 * no connected session it answers at once with ZooKeeperUnavailableError, sending nothing; a
 * try under way when the connection drops answers then.
 */
import { ZkLockClient, ZooKeeperUnavailableError } from '../../lib';
import { scaled } from '../support/time-scale';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { eventually, testRoot } from './support/zk-admin';

describe('tryAcquire during a ZooKeeper outage', () => {
  const root = testRoot('try-outage');
  let server: ZooKeeperServer;
  let locks: ZkLockClient;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      namespace: root,
      sessionTimeoutMs: 20_000,
    });
  });

  afterAll(async () => {
    await locks.close();
    await server.stop();
  });

  it('answers at once with ZooKeeperUnavailableError, and locks again once ZooKeeper is back', async () => {
    await (await locks.tryAcquire('/before'))?.release();
    await server.members[0].stop();
    await eventually('the client noticed', () => locks.state === 'SUSPENDED');
    for (const attempt of [
      () => locks.tryAcquire('/during'),
      () => locks.readLock('/during-read').tryAcquire(),
      () => locks.acquire('/during-zero', { waitTimeoutMs: 0 }),
    ]) {
      const startedAt = Date.now();
      const outcome = await attempt().then(
        () => 'answered without an error',
        (err: Error) => err,
      );
      // At once: no request is sent and nothing is waited for.
      expect(Date.now() - startedAt).toBeLessThan(scaled(500));
      expect(outcome).toBeInstanceOf(ZooKeeperUnavailableError);
      expect((outcome as Error).message).toContain('a try does not wait');
    }
    // A try refused at once keeps nothing of its path in the client.
    const queues = (locks as unknown as { queues: { all(): { lockPath: string }[] } }).queues;
    expect(queues.all().map((queue) => queue.lockPath)).toEqual([]);
    server.members[0].start();
    await server.members[0].waitServing();
    await eventually('reconnected', () => locks.state === 'RECONNECTED', scaled(60_000));
    const lock = await locks.tryAcquire('/after');
    expect(lock).not.toBeNull();
    await lock!.release();
  });
});
