/**
 * Issue #9 §5: Curator's InterProcessReadWriteLock and InterProcessSemaphoreV2 (5.4, in its own
 * JVM) and this library's read/write lock and semaphore on the same paths: readers share across
 * both, writers exclude both, a queued writer is not overtaken by a later reader of the other
 * client, and a semaphore's limit holds across both.
 */
import { ZkLockClient } from '../../lib';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';

describe('Curator read/write lock and semaphore with ours', () => {
  const root = testRoot('interop-family');
  let curator: LockPeer;
  let ours: ZkLockClient;
  let admin: ZkAdmin;

  beforeAll(async () => {
    curator = await LockPeer.curator(zkConnectFromEnv());
    ours = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    admin = await ZkAdmin.connect(zkConnectFromEnv());
  }, 180_000);

  afterAll(async () => {
    await curator?.stop();
    await ours?.close();
    await admin?.removeTree(root);
    admin?.close();
  });

  const nodes = (path: string): Promise<string[]> => admin.children(path);

  it('readers share across Curator and us; a writer of either excludes the other', async () => {
    const path = `${root}/rw-share`;
    curator.acquire('r1', 'read', path);
    await curator.acquired('r1');
    const read = await ours.readLock(path).acquire({ waitTimeoutMs: 30_000 });
    expect(await ours.writeLock(path).tryAcquire()).toBeNull();
    curator.acquire('w1', 'write', path);
    await eventually('Curator writer queued', async () => (await nodes(path)).length >= 3);
    expect(curator.hasAcquired('w1')).toBe(false);
    await read.release();
    curator.release('r1');
    await curator.acquired('w1');
    expect(await ours.readLock(path).tryAcquire()).toBeNull();
    curator.release('w1');
    await eventually('all released', async () => (await nodes(path)).length === 0);
  });

  it("Curator's queued writer goes before our later reader, and our queued writer before Curator's later reader", async () => {
    const path = `${root}/rw-fifo`;
    const first = await ours.readLock(path).acquire();
    curator.acquire('w2', 'write', path);
    await eventually('Curator writer queued', async () => (await nodes(path)).length === 2);
    const laterRead = ours.readLock(path).acquire({ waitTimeoutMs: 30_000 });
    await eventually('our reader queued', async () => (await nodes(path)).length === 3);
    await first.release();
    await curator.acquired('w2');
    let readDone = false;
    void laterRead.then(() => (readDone = true));
    expect(readDone).toBe(false);
    curator.release('w2');
    await (await laterRead).release();

    const write = await ours.writeLock(path).acquire();
    curator.acquire('r2', 'read', path);
    await eventually('Curator reader queued', async () => (await nodes(path)).length === 2);
    expect(curator.hasAcquired('r2')).toBe(false);
    await write.release();
    await curator.acquired('r2');
    curator.release('r2');
  });

  it("a semaphore's limit holds across Curator's leases and ours", async () => {
    const path = `${root}/sem`;
    const semaphore = ours.semaphore(path, { maxLeases: 2 });
    curator.acquire('l1', 'lease', path, 2);
    await curator.acquired('l1');
    const mine = await semaphore.acquire({ waitTimeoutMs: 30_000 });
    expect(await semaphore.tryAcquire()).toBeNull();
    curator.acquire('l2', 'lease', path, 2);
    await eventually(
      'Curator waits for room',
      async () => (await nodes(`${path}/leases`)).length === 3,
    );
    expect(curator.hasAcquired('l2')).toBe(false);
    await mine.release();
    await curator.acquired('l2');
    const waiting = semaphore.acquire({ waitTimeoutMs: 30_000 });
    curator.release('l1');
    const again = await waiting;
    await again.release();
    curator.release('l2');
    await eventually('no lease is left', async () => (await nodes(`${path}/leases`)).length === 0);
  });
});
