/**
 * Curator's InterProcessReadWriteLock and InterProcessSemaphoreV2 (5.4, in its own
 * JVM) and this library's read/write lock and semaphore on the same paths: readers share across
 * both, writers exclude both, a queued writer is not overtaken by a later reader of the other
 * client, and a semaphore's limit holds across both.
 */
import { eventually } from '../core/support/zk-admin';
import { LockPeer } from '../support/peers';
import { useInterop } from './interop-fixture';

describe('Curator read/write lock and semaphore with ours', () => {
  const zk = useInterop('interop-family', (connect) => LockPeer.curator(connect));

  it('readers share across Curator and us; a writer of either excludes the other', async () => {
    const path = `${zk.root}/rw-share`;
    zk.peer.acquire('r1', 'read', path);
    await zk.peer.acquired('r1');
    const read = await zk.ours.readLock(path).acquire({ waitTimeoutMs: 30_000 });
    expect(await zk.ours.writeLock(path).tryAcquire()).toBeNull();
    zk.peer.acquire('w1', 'write', path);
    await eventually('Curator writer queued', async () => (await zk.nodes(path)).length >= 3);
    expect(zk.peer.hasAcquired('w1')).toBe(false);
    await read.release();
    zk.peer.release('r1');
    await zk.peer.acquired('w1');
    expect(await zk.ours.readLock(path).tryAcquire()).toBeNull();
    zk.peer.release('w1');
    await eventually('all released', async () => (await zk.nodes(path)).length === 0);
  });

  it("Curator's queued writer goes before our later reader, and our queued writer before Curator's later reader", async () => {
    const path = `${zk.root}/rw-fifo`;
    const first = await zk.ours.readLock(path).acquire();
    zk.peer.acquire('w2', 'write', path);
    await eventually('Curator writer queued', async () => (await zk.nodes(path)).length === 2);
    const laterRead = zk.ours.readLock(path).acquire({ waitTimeoutMs: 30_000 });
    await eventually('our reader queued', async () => (await zk.nodes(path)).length === 3);
    await first.release();
    await zk.peer.acquired('w2');
    let readDone = false;
    void laterRead.then(() => (readDone = true));
    expect(readDone).toBe(false);
    zk.peer.release('w2');
    await (await laterRead).release();

    const write = await zk.ours.writeLock(path).acquire();
    zk.peer.acquire('r2', 'read', path);
    await eventually('Curator reader queued', async () => (await zk.nodes(path)).length === 2);
    expect(zk.peer.hasAcquired('r2')).toBe(false);
    await write.release();
    await zk.peer.acquired('r2');
    zk.peer.release('r2');
  });

  it("a semaphore's limit holds across Curator's leases and ours", async () => {
    const path = `${zk.root}/sem`;
    const semaphore = zk.ours.semaphore(path, { maxLeases: 2 });
    zk.peer.acquire('l1', 'lease', path, 2);
    await zk.peer.acquired('l1');
    const mine = await semaphore.acquire({ waitTimeoutMs: 30_000 });
    expect(await semaphore.tryAcquire()).toBeNull();
    zk.peer.acquire('l2', 'lease', path, 2);
    await eventually(
      'Curator waits for room',
      async () => (await zk.nodes(`${path}/leases`)).length === 3,
    );
    expect(zk.peer.hasAcquired('l2')).toBe(false);
    await mine.release();
    await zk.peer.acquired('l2');
    const waiting = semaphore.acquire({ waitTimeoutMs: 30_000 });
    zk.peer.release('l1');
    const again = await waiting;
    await again.release();
    zk.peer.release('l2');
    await eventually(
      'no lease is left',
      async () => (await zk.nodes(`${path}/leases`)).length === 0,
    );
  });
});
