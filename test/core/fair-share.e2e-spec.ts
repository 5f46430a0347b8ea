/**
 * Processes with the same load get the same share of a lock's grants, batching
 * or not (docs/design.md "Ownership and batching inside one process": a node serves at most
 * MAX_BATCH callers). Three processes each queue 100 callers while the lock is held; the
 * order of the grants comes from the fencing tokens, which grow from grant to grant.
 */
import { exited, nextMessage, spawnFixture } from './support/agents';
import { useCoreFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';

const PROCESSES = 3;
const CALLERS = 100;

interface Done {
  type: 'done';
  tokens: string[];
}

describe('shares of grants between processes with the same load', () => {
  const zk = useCoreFixture('fair-share');

  it('gives each of 3 processes of 100 waiting callers at least a sixth of the first half of the grants', async () => {
    const path = `${zk.root}/shared`;
    const holder = await zk.locks.acquire(path);
    const env = { LOCK_PATH: path, CALLERS: String(CALLERS) };
    const workers = Array.from({ length: PROCESSES }, () => spawnFixture('share-worker', env));
    await Promise.all(workers.map((w) => nextMessage(w, () => true)));
    const asked = workers.map((w) => nextMessage<{ type: string }>(w, (m) => m.type === 'asked'));
    const done = workers.map((w) => nextMessage<Done>(w, (m) => m.type === 'done'));
    workers.forEach((w) => w.send('go'));
    await Promise.all(asked);
    // Every process has its two nodes (maxNodesPerPath) in line before the lock is free.
    await eventually('each process has 2 nodes queued', async () => {
      const { queue } = await zk.locks.inspect(path);
      return workers.every((w) => queue.filter((n) => n.data.pid === w.pid).length === 2);
    });
    await holder.release();

    const grants = (await Promise.all(done)).flatMap(({ tokens }, worker) =>
      tokens.map((token) => ({ token: BigInt(token), worker })),
    );
    expect((await Promise.all(workers.map(exited))).every((code) => code === 0)).toBe(true);
    grants.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
    expect(grants).toHaveLength(PROCESSES * CALLERS);
    const firstHalf = grants.slice(0, grants.length / 2);
    const shares = workers.map((_, i) => firstHalf.filter((g) => g.worker === i).length);
    // Equal load, equal turns: without a bound on a node's batch, one process's 99 callers
    // held the lock in turn while the others' waited, and the last process got 1 of 150.
    const least = Math.min(...shares);
    expect(
      least,
      `first ${firstHalf.length} grants by process: ${shares.join(', ')}`,
    ).toBeGreaterThanOrEqual(firstHalf.length / 6);
    expect(await zk.admin.children(path)).toEqual([]);
  });
});
