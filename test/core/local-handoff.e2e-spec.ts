/**
 * Handoffs between callers of one process do not each cost a ZooKeeper node (one node
 * serves a batch), yet never go ahead of a remote node that queued earlier (docs/design.md
 * "Ownership and batching inside one process").
 */
import { LockHandle } from '../../lib';
import { useCoreFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('handoffs inside one process', () => {
  const zk = useCoreFixture('local-handoff', {
    // Keep idle lock nodes, so their child-change counters can be read after the run.
    parentCleanupDelayMs: 600_000,
  });

  /**
   * A lock path made persistent beforehand: the servers delete an emptied container (a path the
   * client makes) on their next sweep, maybe before its counter is read after the run.
   */
  const keptPath = async (name: string): Promise<string> => {
    const path = `${zk.root}/${name}`;
    await zk.admin.create(path, '', 'persistent');
    return path;
  };

  it('serves callers that wait in the same tick on one node, in order, with growing tokens', async () => {
    const path = await keptPath('burst');
    const order: number[] = [];
    const tokens: bigint[] = [];
    let inside = 0;
    let overlaps = 0;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        zk.locks.withLock(path, async (lock) => {
          if (inside++ > 0) overlaps++;
          order.push(i);
          tokens.push(lock.fencingToken);
          await tick();
          inside--;
        }),
      ),
    );
    expect(overlaps).toBe(0);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBe(tokens[i - 1] + 1n);
    await eventually('the node is gone', async () => (await zk.admin.children(path)).length === 0);
    // One create and one delete under the lock node for all twenty callers.
    expect(await zk.admin.childChanges(path)).toBe(2);
  });

  it('gives a caller that arrives while we hold a node of its own (it asked after ours was created)', async () => {
    const path = await keptPath('trickle');
    const first = await zk.locks.acquire(path);
    const tokens = [first.fencingToken];
    // Each next caller asks while the previous one still holds.
    let current: LockHandle = first;
    for (let i = 0; i < 5; i++) {
      const next = zk.locks.acquire(path);
      await tick();
      await current.release();
      current = await next;
      tokens.push(current.fencingToken);
    }
    await current.release();
    for (let i = 1; i < tokens.length; i++) {
      expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
      expect(tokens[i] >> 32n).not.toBe(tokens[i - 1] >> 32n); // another node, not a generation
    }
    await eventually(
      'the nodes are gone',
      async () => (await zk.admin.children(path)).length === 0,
    );
    expect(await zk.admin.childChanges(path)).toBe(2 * tokens.length);
  });

  it('lets a remote node that queued while we held go before our callers that came after it', async () => {
    const path = `${zk.root}/remote-first`;
    const agent = await zk.startAgent();
    const holder = await zk.locks.acquire(path);
    const remote = agent.acquire(path);
    await eventually('the remote node is queued', async () => {
      return (await zk.locks.inspect(path)).queue.length === 1;
    });
    const local = zk.locks.acquire(path);
    await tick();
    await holder.release();
    const first = await Promise.race([remote.then(() => 'remote'), local.then(() => 'local')]);
    if (first === 'local') await (await local).release(); // unblock the remote before failing
    expect(first).toBe('remote');
    const remoteToken = await remote;
    await agent.release(path);
    const localLock = await local;
    expect(remoteToken).toBeGreaterThan(holder.fencingToken);
    expect(localLock.fencingToken).toBeGreaterThan(remoteToken);
    await localLock.release();
  });

  it('serves a batch that queued before a remote node ahead of it, with one node for the batch', async () => {
    const path = `${zk.root}/batch-first`;
    const [holderAgent, lateAgent] = [await zk.startAgent(), await zk.startAgent()];
    const holderToken = await holderAgent.acquire(path);
    const order: string[] = [];
    const batch = [1, 2, 3].map((i) =>
      zk.locks.withLock(path, async (lock) => {
        order.push(`local-${i}`);
        await tick();
        return lock.fencingToken;
      }),
    );
    await eventually('the batch is queued', async () => {
      return (await zk.locks.inspect(path)).queue.length === 1;
    });
    const late = lateAgent.acquire(path).then((token) => {
      order.push('late-remote');
      return token;
    });
    await eventually('the late remote node is queued', async () => {
      return (await zk.locks.inspect(path)).queue.length === 2;
    });
    await holderAgent.release(path);
    const batchTokens = await Promise.all(batch);
    const lateToken = await late;
    expect(order).toEqual(['local-1', 'local-2', 'local-3', 'late-remote']);
    expect(batchTokens[0]).toBeGreaterThan(holderToken);
    expect(batchTokens[1]).toBe(batchTokens[0] + 1n);
    expect(batchTokens[2]).toBe(batchTokens[1] + 1n);
    expect(lateToken).toBeGreaterThan(batchTokens[2]);
    await lateAgent.release(path);
  });

  it('does not starve a remote process while local callers keep taking the lock', async () => {
    const path = `${zk.root}/no-starvation`;
    const agent = await zk.startAgent();
    let stop = false;
    let localOps = 0;
    const loops = Array.from({ length: 4 }, async () => {
      while (!stop) {
        await zk.locks.withLock(path, async () => {
          localOps++;
          await tick();
        });
      }
    });
    let localDuringWait = Infinity;
    try {
      await eventually('local callers are busy', () => localOps > 50);
      const remote = agent.acquire(path, scaled(10_000));
      let atQueued = 0;
      await eventually('the remote node is queued', async () => {
        const { holder, queue } = await zk.locks.inspect(path);
        atQueued = localOps;
        return [holder, ...queue].some((node) => node?.data.pid === agent.pid);
      });
      // Once the remote node is in line, our callers queue behind it: only those already
      // holding or served on the holding node (at most one per loop) go first.
      await remote;
      localDuringWait = localOps - atQueued;
      await agent.release(path);
    } finally {
      stop = true;
      await Promise.all(loops);
    }
    expect(localDuringWait).toBeLessThanOrEqual(4);
  });
});
