/**
 * `inspect()` orders every node style by its sequence and names every holder (the
 * readers that hold together, or the writer); a semaphore lists who holds a lease and who waits,
 * in order. Each contender is its own client (its own session), so it queues like another process.
 */
import { LockHandle, LockNodeInfo, SemaphoreLease, ZkLockClient } from '../../lib';
import { useCoreFixture } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

describe('inspect()', () => {
  const zk = useCoreFixture('inspect', { parentCleanupDelayMs: 100 });
  const clients = new Map<string, ZkLockClient>();
  afterAll(async () => {
    await Promise.all([...clients.values()].map((c) => c.close()));
  });

  const p = (name: string): string => `${zk.root}/${name}`;
  /** A client whose nodes record `app: name` (inspect() reads it back). */
  const client = async (name: string): Promise<ZkLockClient> => {
    const existing = clients.get(name);
    if (existing) return existing;
    const created = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      nodeData: { app: name },
    });
    clients.set(name, created);
    return created;
  };
  const apps = (nodes: readonly LockNodeInfo[]): unknown[] => nodes.map((n) => n.data.app);
  const sequences = (nodes: readonly LockNodeInfo[]): number[] => nodes.map((n) => n.sequence);
  const increasing = (values: number[]): boolean =>
    values.every((v, i) => v >= 0 && (i === 0 || v > values[i - 1]));

  // The node names start with a random uuid: sorted by name (the mutex rule applied to __READ__
  // and __WRIT__ nodes) the holder is right only by chance, so several rounds, each with new uuids.
  it('on a read/write path: the readers that hold, then the writer and the reader queued behind it, by sequence', async () => {
    const [r1, r2, w, r3] = await Promise.all(['r1', 'r2', 'w', 'r3'].map(client));
    for (let round = 0; round < 5; round++) {
      const path = p(`rw-${round}`);
      const held: LockHandle[] = [
        await r1.readLock(path).acquire(),
        await r2.readLock(path).acquire(),
      ];
      const write = w.writeLock(path).acquire({ waitTimeoutMs: 60_000 });
      await eventually(
        'the writer queued',
        async () => (await zk.admin.children(path)).length === 3,
      );
      const lateRead = r3.readLock(path).acquire({ waitTimeoutMs: 60_000 });
      await eventually(
        'the reader queued',
        async () => (await zk.admin.children(path)).length === 4,
      );

      const readers = await zk.locks.inspect(path);
      expect(readers.holder?.data.app).toBe('r1');
      expect(increasing(sequences([readers.holder!, ...readers.queue]))).toBe(true);
      expect(apps(readers.holders)).toEqual(['r1', 'r2']);
      expect(apps(readers.queue)).toEqual(['w', 'r3']);

      await Promise.all(held.map((lock) => lock.release()));
      const writer = await write;
      const writing = await zk.locks.inspect(path);
      expect(writing.holder?.data.app).toBe('w');
      expect(increasing(sequences([writing.holder!, ...writing.queue]))).toBe(true);
      expect(apps(writing.holders)).toEqual(['w']);
      expect(apps(writing.queue)).toEqual(['r3']);

      await writer.release();
      await (await lateRead).release();
      expect(await zk.locks.inspect(path)).toEqual({
        path,
        holder: null,
        holders: [],
        queue: [],
      });
    }
  });

  it('on a mutex path: one holder, the queue in order', async () => {
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(client));
    const path = p('mutex');
    const first = await a.acquire(path);
    const second = b.acquire(path, { waitTimeoutMs: 60_000 });
    await eventually('b queued', async () => (await zk.admin.children(path)).length === 2);
    const third = c.acquire(path, { waitTimeoutMs: 60_000 });
    await eventually('c queued', async () => (await zk.admin.children(path)).length === 3);
    const seen = await zk.locks.inspect(path);
    expect(apps(seen.holders)).toEqual(['a']);
    expect(seen.holder?.data.app).toBe('a');
    expect(apps(seen.queue)).toEqual(['b', 'c']);
    expect(increasing(sequences([...seen.holders, ...seen.queue]))).toBe(true);
    await first.release();
    await (await second).release();
    await (await third).release();
  });

  it('semaphore.inspect(): the lease holders, then who waits, in order', async () => {
    const [a, b, c] = await Promise.all(['sa', 'sb', 'sc'].map(client));
    const path = p('sem');
    const open = (by: ZkLockClient) => by.semaphore(path, { maxLeases: 2 });
    const leases: SemaphoreLease[] = [await open(a).acquire(), await open(b).acquire()];
    const waiting = open(c).acquire({ waitTimeoutMs: 60_000 });
    await eventually(
      'c waits with its lease node',
      async () => (await zk.admin.children(`${path}/leases`)).length === 3,
    );

    const full = await open(zk.locks).inspect();
    expect(full.path).toBe(path);
    expect(full.maxLeases).toBe(2);
    expect(apps(full.holders)).toEqual(['sa', 'sb']);
    expect(apps(full.waiting)).toEqual(['sc']);
    expect(increasing(sequences([...full.holders, ...full.waiting]))).toBe(true);

    await leases[0].release();
    leases.push(await waiting);
    const after = await open(zk.locks).inspect();
    expect(apps(after.holders)).toEqual(['sb', 'sc']);
    expect(after.waiting).toEqual([]);

    await Promise.all(leases.slice(1).map((lease) => lease.release()));
    const idle = await open(zk.locks).inspect();
    expect([idle.holders, idle.waiting]).toEqual([[], []]);
  });
});
