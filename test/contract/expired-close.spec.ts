/**
 * A client whose session expired and that is closed while it reconnects leaves no timer that
 * keeps the process alive: node-zookeeper-client's connect timeout (10 s) of the attempt under
 * way is cleared (it kept the test runner from exiting after a ZkLockTestingModule test that
 * expired sessions). On the in-memory ZooKeeper, which expires sessions on demand. The leak check counts
 * only what the library created (test/support/own-resources.ts), never the runner's own timers.
 */
import { LockLostError, ZkLockClient } from '../../lib';
import { InMemoryZooKeeper } from '../../lib/testing';
import { trackOwnResources } from '../support/own-resources';

it('close() after an expiry leaves no pending timer and no socket behind', async () => {
  const own = await trackOwnResources(async () => {
    const zookeeper = await InMemoryZooKeeper.start();
    const locks = await ZkLockClient.connect({ connectionString: zookeeper.connectionString });
    const held = await locks.acquire('/expired');
    zookeeper.expireSessions();
    await new Promise((resolve) => held.signal.addEventListener('abort', resolve));
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    await locks.close();
    await zookeeper.close();
  });
  expect(await own.leftOpen()).toEqual([]);
});
