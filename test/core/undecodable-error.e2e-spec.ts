/**
 * Issue #12 finding 9: a server error code node-zookeeper-client cannot decode (here -125, a
 * quota error of newer servers) drops the socket, and its request ends "in doubt". A create in
 * doubt is recovered and sent again, so without a limit the acquire loops until its wait runs
 * out. After the same undecodable code twice, the acquire fails with a clear, documented error.
 * A real ZooKeeper sends such codes only under conditions a test cannot set up here, so a fake
 * server answers every create with it.
 */
import { LockTimeoutError, ZkLockClient, ZkLockError } from '../../lib';
import { FakeZooKeeper } from './support/fake-zookeeper';

const QUOTA_EXCEEDED = -125;
const CREATE = 1;

describe('an error code the client cannot decode (issue #12 finding 9)', () => {
  let server: FakeZooKeeper;
  let client: ZkLockClient | undefined;

  beforeEach(async () => {
    server = await FakeZooKeeper.start(undefined, { [CREATE]: QUOTA_EXCEEDED });
  });

  afterEach(async () => {
    await client?.close();
    await server.close();
  });

  it('fails the acquire after the second such answer, naming the lock and the code', async () => {
    client = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: 10_000,
      requestTimeoutMs: 1000,
    });
    const error = await client.acquire('/quota/full', { waitTimeoutMs: 30_000 }).catch((e) => e);
    expect(error).not.toBeInstanceOf(LockTimeoutError);
    expect(error).toBeInstanceOf(ZkLockError);
    expect(error.message).toContain('"/quota/full"');
    expect(error.message).toContain(`error code ${QUOTA_EXCEEDED} twice`);
    const creates = server.requests.filter((r) => r.type === CREATE);
    expect(creates).toHaveLength(2);
  });
});
