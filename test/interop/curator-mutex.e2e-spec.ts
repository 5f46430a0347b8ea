/**
 * Issue #9 §5: Apache Curator's InterProcessMutex (5.4, Debian's package, in its own JVM) and
 * this library's mutex on the same paths: they exclude each other both ways, and processes get
 * the lock in the order they queued, whichever client they use.
 */
import { ZkLockClient } from '../../lib';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';

describe('Curator InterProcessMutex and our mutex on the same paths', () => {
  const root = testRoot('interop-curator');
  let curator: LockPeer;
  let ours: ZkLockClient;
  let later: ZkLockClient;
  let admin: ZkAdmin;

  beforeAll(async () => {
    curator = await LockPeer.curator(zkConnectFromEnv());
    ours = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    later = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    admin = await ZkAdmin.connect(zkConnectFromEnv());
  }, 180_000);

  afterAll(async () => {
    await curator?.stop();
    await ours?.close();
    await later?.close();
    await admin?.removeTree(root);
    admin?.close();
  });

  it('a lock Curator holds excludes ours, and ours is granted once Curator releases', async () => {
    const path = `${root}/curator-first`;
    curator.acquire('m1', 'mutex', path);
    await curator.acquired('m1');
    expect(await ours.tryAcquire(path)).toBeNull();
    const waiting = ours.acquire(path, { waitTimeoutMs: 60_000 });
    await eventually('our node queued', async () => (await admin.children(path)).length === 2);
    curator.release('m1');
    const lock = await waiting;
    await lock.release();
  });

  it('a lock we hold excludes Curator until we release', async () => {
    const path = `${root}/ours-first`;
    const lock = await ours.acquire(path);
    curator.acquire('m2', 'mutex', path);
    await eventually('Curator queued', async () => (await admin.children(path)).length === 2);
    expect(curator.hasAcquired('m2')).toBe(false);
    await lock.release();
    await curator.acquired('m2');
    curator.release('m2');
    await curator.next((e) => e.event === 'released' && e.id === 'm2');
  });

  it('FIFO across both: ours, then Curator, then ours again, in the order they queued', async () => {
    const path = `${root}/fifo`;
    const order: string[] = [];
    const first = await ours.acquire(path);
    curator.acquire('m3', 'mutex', path);
    await eventually('Curator queued', async () => (await admin.children(path)).length === 2);
    const third = later.acquire(path).then((lock) => {
      order.push('later');
      return lock;
    });
    await eventually('the third queued', async () => (await admin.children(path)).length === 3);
    void curator.acquired('m3').then(() => order.push('curator'));
    await first.release();
    await curator.acquired('m3');
    expect(order).toEqual(['curator']);
    curator.release('m3');
    await (await third).release();
    expect(order).toEqual(['curator', 'later']);
  });
});
