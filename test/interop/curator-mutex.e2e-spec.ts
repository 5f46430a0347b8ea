/**
 * Apache Curator's InterProcessMutex (5.4, Debian's package, in its own JVM) and
 * this library's mutex on the same paths: they exclude each other both ways, and processes get
 * the lock in the order they queued, whichever client they use.
 */
import { eventually } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';
import { useInterop } from './interop-fixture';

describe('Curator InterProcessMutex and our mutex on the same paths', () => {
  const zk = useInterop('interop-curator', (connect) => LockPeer.curator(connect));

  it('a lock Curator holds excludes ours, and ours is granted once Curator releases', async () => {
    const path = `${zk.root}/curator-first`;
    zk.peer.acquire('m1', 'mutex', path);
    await zk.peer.acquired('m1');
    expect(await zk.ours.tryAcquire(path)).toBeNull();
    const waiting = zk.ours.acquire(path, { waitTimeoutMs: 60_000 });
    await eventually('our node queued', async () => (await zk.nodes(path)).length === 2);
    zk.peer.release('m1');
    const lock = await waiting;
    await lock.release();
  });

  it('a lock we hold excludes Curator until we release', async () => {
    const path = `${zk.root}/ours-first`;
    const lock = await zk.ours.acquire(path);
    zk.peer.acquire('m2', 'mutex', path);
    await eventually('Curator queued', async () => (await zk.nodes(path)).length === 2);
    expect(zk.peer.hasAcquired('m2')).toBe(false);
    await lock.release();
    await zk.peer.acquired('m2');
    zk.peer.release('m2');
    await zk.peer.next((e) => e.event === 'released' && e.id === 'm2');
  });

  it('FIFO across both: ours, then Curator, then ours again, in the order they queued', async () => {
    const path = `${zk.root}/fifo`;
    const order: string[] = [];
    const first = await zk.ours.acquire(path);
    zk.peer.acquire('m3', 'mutex', path);
    await eventually('Curator queued', async () => (await zk.nodes(path)).length === 2);
    const third = zk.later.acquire(path).then((lock) => {
      order.push('later');
      return lock;
    });
    await eventually('the third queued', async () => (await zk.nodes(path)).length === 3);
    void zk.peer.acquired('m3').then(() => order.push('curator'));
    await first.release();
    await zk.peer.acquired('m3');
    expect(order).toEqual(['curator']);
    zk.peer.release('m3');
    await (await third).release();
    expect(order).toEqual(['curator', 'later']);
  });
});
