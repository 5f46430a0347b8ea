/**
 * A client whose session expired and that is closed while it reconnects leaves no timer that
 * keeps the process alive: node-zookeeper-client's connect timeout (10 s) of the attempt under
 * way is cleared (it kept jest from exiting after a ZkLockTestingModule test that expired sessions). On
 * the in-memory ZooKeeper, which expires sessions on demand.
 */
import { createHook } from 'node:async_hooks';
import { LockLostError, ZkLockClient } from '../../lib';
import { InMemoryZooKeeper } from '../../lib/testing';

interface TimerLike {
  hasRef(): boolean;
  _destroyed?: boolean;
  _idleTimeout?: number;
}

it('close() after an expiry leaves no pending timer and no socket behind', async () => {
  const created: TimerLike[] = [];
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'Timeout') created.push(resource as TimerLike);
    },
  }).enable();
  try {
    const zookeeper = await InMemoryZooKeeper.start();
    const locks = await ZkLockClient.connect({ connectionString: zookeeper.connectionString });
    const held = await locks.acquire('/expired');
    zookeeper.expireSessions();
    await new Promise((resolve) => held.signal.addEventListener('abort', resolve));
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    await locks.close();
    await zookeeper.close();
  } finally {
    hook.disable();
  }
  await new Promise((resolve) => setImmediate(resolve));
  const keepingAlive = created.filter((t) => !t._destroyed && t.hasRef());
  expect(keepingAlive.map((t) => `${t._idleTimeout} ms timer`)).toEqual([]);
  // Closed sockets leave the list within a few event-loop turns.
  const sockets = (): string[] =>
    process.getActiveResourcesInfo().filter((t) => t.startsWith('TCP'));
  for (let i = 0; i < 200 && sockets().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(sockets()).toEqual([]);
});
