/**
 * Issue #9 §5: kazoo 2.8's Lock (Python, in its own process) and our mutex on the same paths.
 * kazoo names its nodes `<uuid>__lock__<seq>` and counts other clients' nodes as contenders only
 * when told their pattern (`extra_lock_patterns=["-lock-"]`, as our peer does); our ordering
 * reads kazoo's names. With that, they exclude each other both ways and keep FIFO order.
 */
import { ZkLockClient } from '../../lib';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';

describe('kazoo Lock and our mutex on the same paths', () => {
  const root = testRoot('interop-kazoo');
  let kazoo: LockPeer;
  let ours: ZkLockClient;
  let later: ZkLockClient;
  let admin: ZkAdmin;

  beforeAll(async () => {
    kazoo = await LockPeer.kazoo(zkConnectFromEnv());
    ours = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    later = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    admin = await ZkAdmin.connect(zkConnectFromEnv());
  }, 180_000);

  afterAll(async () => {
    await kazoo?.stop();
    await ours?.close();
    await later?.close();
    await admin?.removeTree(root);
    admin?.close();
  });

  const nodes = (path: string): Promise<string[]> => admin.children(path);

  it('a lock kazoo holds excludes ours until kazoo releases', async () => {
    const path = `${root}/kazoo-first`;
    kazoo.acquire('k1', 'mutex', path);
    await kazoo.acquired('k1');
    expect((await nodes(path))[0]).toMatch(/^[0-9a-f]{32}__lock__\d{10}$/);
    expect(await ours.tryAcquire(path)).toBeNull();
    const waiting = ours.acquire(path, { waitTimeoutMs: 60_000 });
    await eventually('our node queued', async () => (await nodes(path)).length === 2);
    kazoo.release('k1');
    await (await waiting).release();
  });

  it('a lock we hold excludes kazoo until we release', async () => {
    const path = `${root}/ours-first`;
    const lock = await ours.acquire(path);
    kazoo.acquire('k2', 'mutex', path);
    await eventually('kazoo queued', async () => (await nodes(path)).length === 2);
    expect(kazoo.hasAcquired('k2')).toBe(false);
    await lock.release();
    await kazoo.acquired('k2');
    kazoo.release('k2');
  });

  it('FIFO across both: ours, then kazoo, then ours again', async () => {
    const path = `${root}/fifo`;
    const order: string[] = [];
    const first = await ours.acquire(path);
    kazoo.acquire('k3', 'mutex', path);
    await eventually('kazoo queued', async () => (await nodes(path)).length === 2);
    const third = later.acquire(path).then((lock) => (order.push('later'), lock));
    await eventually('the third queued', async () => (await nodes(path)).length === 3);
    void kazoo.acquired('k3').then(() => order.push('kazoo'));
    await first.release();
    await kazoo.acquired('k3');
    expect(order).toEqual(['kazoo']);
    kazoo.release('k3');
    await (await third).release();
    expect(order).toEqual(['kazoo', 'later']);
  });
});
