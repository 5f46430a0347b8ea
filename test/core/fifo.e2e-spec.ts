/**
 * Processes that queue one after another while the lock is held get it in that
 * order, and each next holder sees a larger fencing token.
 */
import { LockAgent, tokenOf } from './support/agents';
import { useCoreFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';

const WAITERS = 4;

// sessions 4: the holder and every waiting process keep 4 sessions (the path uses one of each).
describe.each([1, 4])('FIFO order across processes (sessions: %i)', (sessions) => {
  const zk = useCoreFixture(`fifo-${sessions}`, { sessions });
  const path = `${zk.root}/queue`;

  it('grants the lock to waiting processes in the order they queued', async () => {
    const holder = await zk.locks.acquire(path);
    // Started together; they queue one at a time below, in this order.
    const agents = await Promise.all(
      Array.from({ length: WAITERS }, () => zk.startAgent({ sessions })),
    );

    // Queue the agents one at a time: each must be visible in the queue before the next asks.
    const pending = new Map<LockAgent, Promise<bigint>>();
    for (const [i, agent] of agents.entries()) {
      pending.set(agent, agent.send({ op: 'acquire', path }).then(tokenOf));
      await eventually(
        `agent ${i + 1} queued`,
        async () => (await zk.locks.inspect(path)).queue.length === i + 1,
      );
    }
    const queue = (await zk.locks.inspect(path)).queue;
    expect(queue.map((node) => node.data.pid)).toEqual(agents.map((a) => a.pid));

    // Hand the lock down the line: whoever gets it next is recorded, then releases.
    const order: number[] = [];
    const tokens: bigint[] = [holder.fencingToken];
    const remaining = new Map(
      [...pending].map(([agent, token]) => [agent, token.then((value) => ({ agent, value }))]),
    );
    await holder.release();
    while (remaining.size > 0) {
      const { agent, value } = await Promise.race(remaining.values());
      remaining.delete(agent);
      order.push(agent.pid);
      tokens.push(value);
      await agent.release(path);
    }

    expect(order).toEqual(agents.map((a) => a.pid));
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    expect(await zk.admin.children(path)).toEqual([]);
  });
});
