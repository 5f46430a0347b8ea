/**
 * The cleanup of idle lock paths removes only nodes created as lock paths
 * by this library, that nobody else has written data to, with the version it just read. A
 * template value can name any node (`/app/{name}` with name=config): such a node must survive,
 * and so must another session's ephemeral node.
 */
import { InvalidLockPathError, ZkLockClient } from '../../lib';
import { useTestRoot } from './support/core-fixture';
import { zkConnectFromEnv } from './support/zk-admin';

describe('cleanup of idle lock paths', () => {
  const zk = useTestRoot('reaper-safety');
  /** Cleans up at once when a path goes idle; close() waits for every cleanup under way. */
  const connect = (): Promise<ZkLockClient> =>
    ZkLockClient.connect({ connectionString: zkConnectFromEnv(), parentCleanupDelayMs: 0 });

  it('keeps an existing persistent node with data used as a lock path', async () => {
    const path = `${zk.root}/app/config`;
    await zk.admin.create(path, 'max_connections=100', 'persistent');
    const locks = await connect();
    const lock = await locks.acquire(path);
    await lock.release();
    await locks.close();
    expect(await zk.admin.exists(path)).toBe(true);
    expect(await zk.admin.getData(path)).toBe('max_connections=100');
  });

  it("keeps another session's ephemeral node, and says it cannot be a lock path", async () => {
    const path = `${zk.root}/app/worker-1`;
    await zk.admin.create(path, 'alive', 'ephemeral');
    const locks = await connect();
    const outcome = await locks.acquire(path, { waitTimeoutMs: 10_000 }).catch((err) => err);
    const read = await locks
      .readLock(path)
      .acquire({ waitTimeoutMs: 10_000 })
      .catch((e) => e);
    await locks.close();
    for (const failure of [outcome, read]) {
      expect(failure).toBeInstanceOf(InvalidLockPathError);
      expect((failure as Error).message).toContain(path);
    }
    expect(await zk.admin.exists(path)).toBe(true);
  });

  it('keeps a lock path it created once someone else wrote data to it', async () => {
    const path = `${zk.root}/app/claimed/lock`;
    const locks = await connect();
    const lock = await locks.acquire(path);
    await zk.admin.setData(path, 'someone else uses this node now');
    await lock.release();
    await locks.close();
    expect(await zk.admin.getData(path)).toBe('someone else uses this node now');
  });

  it('still removes a lock path it created, and the parents it created, once idle', async () => {
    const path = `${zk.root}/app/fresh/order-42`;
    await zk.admin.create(`${zk.root}/app/keep`, '', 'persistent'); // `${root}/app` is not ours
    const locks = await connect();
    const lock = await locks.acquire(path);
    await lock.release();
    await locks.close();
    expect(await zk.admin.exists(`${zk.root}/app/fresh`)).toBe(false);
    expect(await zk.admin.exists(`${zk.root}/app`)).toBe(true);
  });
});
