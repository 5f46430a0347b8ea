/**
 * A read that finds no session while ZooKeeper is unreachable (`inspect()`, a semaphore's
 * `inspect()`, an election's `getLeader()` and `getParticipants()`) fails with
 * ZooKeeperUnavailableError naming the path it read, as an acquire does: its message is the line
 * the developer's log shows. On the in-memory ZooKeeper, stopped once the client has connected.
 */
import { ZkLockClient, ZooKeeperUnavailableError } from '../../lib';
import { InMemoryZooKeeper } from '../../lib/testing';
import { eventually } from './support/zk-admin';

describe('reads while ZooKeeper is unreachable', () => {
  let client: ZkLockClient;

  beforeAll(async () => {
    const zookeeper = await InMemoryZooKeeper.start();
    client = await ZkLockClient.connect({
      connectionString: zookeeper.connectionString,
      connectTimeoutMs: 300,
      sessionTimeoutMs: 2_000,
      requestTimeoutMs: 500,
    });
    await zookeeper.close();
    // Disconnected: a read now waits for a session (connectTimeoutMs), not for a reply.
    await eventually('the client to see the server gone', () => client.state !== 'CONNECTED');
  });

  afterAll(() => client?.close());

  it.each([
    ['inspect()', (c: ZkLockClient) => c.inspect('/orders/42'), '/orders/42'],
    [
      "a semaphore's inspect()",
      (c: ZkLockClient) => c.semaphore('/render/pdf', { maxLeases: 2 }).inspect(),
      '/render/pdf',
    ],
    ['getLeader()', (c: ZkLockClient) => c.election('/elections/a').getLeader(), '/elections/a'],
    [
      'getParticipants()',
      (c: ZkLockClient) => c.election('/elections/b').getParticipants(),
      '/elections/b',
    ],
  ])('%s fails with ZooKeeperUnavailableError naming its path', async (_, read, path) => {
    const error = await read(client).then(
      () => new Error('the read succeeded'),
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect((error as Error).message).toContain(`"${path}"`);
  });
});
