/**
 * kazoo 2.8's Lock (Python, in its own process) and our mutex on the same paths.
 * kazoo names its nodes `<uuid>__lock__<seq>` and counts other clients' nodes as contenders only
 * when told their pattern (`extra_lock_patterns=["-lock-"]`, as our peer does); our ordering
 * reads kazoo's names. With that, they exclude each other both ways and keep FIFO order.
 */
import { eventually } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';
import { useInterop } from './interop-fixture';

describe('kazoo Lock and our mutex on the same paths', () => {
  const zk = useInterop('interop-kazoo', (connect) => LockPeer.kazoo(connect));

  it('a lock kazoo holds excludes ours until kazoo releases', async () => {
    const path = `${zk.root}/kazoo-first`;
    zk.peer.acquire('k1', 'mutex', path);
    await zk.peer.acquired('k1');
    expect((await zk.nodes(path))[0]).toMatch(/^[0-9a-f]{32}__lock__\d{10}$/);
    expect(await zk.ours.tryAcquire(path)).toBeNull();
    const waiting = zk.ours.acquire(path, { waitTimeoutMs: 60_000 });
    await eventually('our node queued', async () => (await zk.nodes(path)).length === 2);
    zk.peer.release('k1');
    await (await waiting).release();
  });

  it('a lock we hold excludes kazoo until we release', async () => {
    const path = `${zk.root}/ours-first`;
    const lock = await zk.ours.acquire(path);
    zk.peer.acquire('k2', 'mutex', path);
    await eventually('kazoo queued', async () => (await zk.nodes(path)).length === 2);
    expect(zk.peer.hasAcquired('k2')).toBe(false);
    await lock.release();
    await zk.peer.acquired('k2');
    zk.peer.release('k2');
  });

  it('FIFO across both: ours, then kazoo, then ours again', async () => {
    const path = `${zk.root}/fifo`;
    const order: string[] = [];
    const first = await zk.ours.acquire(path);
    zk.peer.acquire('k3', 'mutex', path);
    await eventually('kazoo queued', async () => (await zk.nodes(path)).length === 2);
    const third = zk.later.acquire(path).then((lock) => (order.push('later'), lock));
    await eventually('the third queued', async () => (await zk.nodes(path)).length === 3);
    void zk.peer.acquired('k3').then(() => order.push('kazoo'));
    await first.release();
    await zk.peer.acquired('k3');
    expect(order).toEqual(['kazoo']);
    zk.peer.release('k3');
    await (await third).release();
    expect(order).toEqual(['kazoo', 'later']);
  });
});
