/**
 * Callers that give up (failed tryAcquire, timed-out waiters) and
 * reconnects must not leave watch callbacks behind in the session's wire: 200 tries against a
 * long hold leave at most one callback on the watched node, no MaxListenersExceededWarning, and
 * the server's watch count on the file's root stays bounded; so do 10 reconnects of a waiting client.
 */
import { ConnectionState, ZkLockClient } from '../../lib';
import { watchesUnder } from '../support/zookeeper';
import { useCoreFixture } from './support/core-fixture';
import { TcpProxy } from './support/tcp-proxy';
import { clientPortOf, eventually, zkConnectFromEnv } from './support/zk-admin';

/**
 * Callbacks the session's wire keeps for data watches on `path`, in a client of one session
 * (option `sessions: 1`): its only member's.
 */
function dataCallbacks(client: ZkLockClient, path: string): number {
  const session = (client as any).pool.members[0].current;
  return session.wire.watcherCount('data', path);
}

describe('watch callbacks of callers that gave up', () => {
  const zk = useCoreFixture('watch-pileup');
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  beforeAll(() => process.on('warning', onWarning));
  afterAll(() => process.off('warning', onWarning));

  it('200 tries and 20 timed-out waits against a long hold leave one callback on the holder', async () => {
    const path = `${zk.root}/hold`;
    const agent = await zk.startAgent();
    await agent.acquire(path);
    const [holderNode] = await zk.admin.children(path);
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessions: 1,
    });
    try {
      const before = await watchesUnder(clientPortOf(zkConnectFromEnv()), zk.root);
      for (let i = 0; i < 200; i++) expect(await client.tryAcquire(path)).toBeNull();
      for (let i = 0; i < 20; i++) {
        await expect(client.acquire(path, { waitTimeoutMs: 20 })).rejects.toMatchObject({
          name: 'LockTimeoutError',
        });
      }
      expect(dataCallbacks(client, `${path}/${holderNode}`)).toBeLessThanOrEqual(1);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      const after = await watchesUnder(clientPortOf(zkConnectFromEnv()), zk.root);
      expect(after - before).toBeLessThanOrEqual(2);
    } finally {
      await client.close();
      await agent.release(zk.root + '/hold');
    }
  });

  it('10 reconnects of a waiting client leave one callback on the node it watches', async () => {
    const path = `${zk.root}/reconnects`;
    const agent = await zk.startAgent();
    await agent.acquire(path);
    const [holderNode] = await zk.admin.children(path);
    const watched = `${path}/${holderNode}`;
    const port = clientPortOf(zkConnectFromEnv());
    const proxy = await TcpProxy.start(port);
    const client = await ZkLockClient.connect({
      connectionString: proxy.connectionString,
      sessions: 1,
    });
    const states: ConnectionState[] = [];
    client.on('state', (state: ConnectionState) => states.push(state));
    try {
      const before = await watchesUnder(port, zk.root);
      const waiting = client.acquire(path); // waits behind the agent, watching its node
      void waiting.catch(() => undefined); // rejected by close() if a check below fails
      await eventually('the waiter watches the holder', () => dataCallbacks(client, watched) === 1);
      for (let i = 1; i <= 10; i++) {
        proxy.block();
        await eventually('the client is suspended', () => states.length === 2 * i - 1);
        proxy.unblock();
        await eventually('the same session is back', () => states[2 * i - 1] === 'RECONNECTED');
        // In order on the session: the waiter's listing after the reconnect, and its watch.
        await client.inspect(path);
        await client.inspect(path);
      }
      expect(states.filter((s) => s === 'RECONNECTED')).toHaveLength(10);
      expect(dataCallbacks(client, watched)).toBeLessThanOrEqual(1);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      const after = await watchesUnder(port, zk.root);
      expect(after - before).toBeLessThanOrEqual(2);
      await agent.release(path);
      await (await waiting).release();
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});
