/**
 * A server error code the engine does not act on (here -125, QUOTA_EXCEEDED of newer servers)
 * must not leave a create "in doubt": a create in doubt is recovered and sent again, so the
 * acquire would loop until its wait runs out. Every code decodes, so the first such answer
 * fails the acquire with a clear error naming the lock and the code.
 * A real ZooKeeper sends such codes only under conditions a test cannot set up here, so a fake
 * server answers every create with it.
 */
import { LockTimeoutError, ZkLockClient, ZkLockError } from '../../lib';
import { FakeZooKeeper } from './support/fake-zookeeper';

const QUOTA_EXCEEDED = -125;
const CREATE = 1;

describe('an error code the engine does not act on', () => {
  let server: FakeZooKeeper;
  let client: ZkLockClient | undefined;

  beforeEach(async () => {
    server = await FakeZooKeeper.start(undefined, { [CREATE]: QUOTA_EXCEEDED });
  });

  afterEach(async () => {
    await client?.close();
    await server.close();
  });

  it('fails the acquire at the first such answer, naming the lock and the code', async () => {
    client = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: 10_000,
      requestTimeoutMs: 1000,
    });
    const error = await client.acquire('/quota/full', { waitTimeoutMs: 30_000 }).catch((e) => e);
    expect(error).not.toBeInstanceOf(LockTimeoutError);
    expect(error).toBeInstanceOf(ZkLockError);
    expect(error.message).toContain('"/quota/full"');
    expect(error.message).toContain(`QUOTA_EXCEEDED[${QUOTA_EXCEEDED}]`);
    const creates = server.requests.filter((r) => r.type === CREATE);
    expect(creates).toHaveLength(1);
  });
});
