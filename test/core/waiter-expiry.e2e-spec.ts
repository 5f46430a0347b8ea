/**
 * A waiting process is frozen (SIGSTOP, like a long GC pause) until ZooKeeper
 * expires its session and deletes its queue node. When it wakes up it either queues again in a
 * new session and eventually gets the lock, or, if its waitTimeoutMs has passed, fails with
 * LockTimeoutError and leaves nothing behind.
 */
import type { AgentReply } from './fixtures/lock-agent';
import { LockAgent, tokenOf } from './support/agents';
import { useCoreFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const WAITER_SESSION_MS = 1_500;

describe('a waiter whose session expires', () => {
  const zk = useCoreFixture('waiter-expiry');

  const queuedPids = async (path: string): Promise<unknown[]> =>
    (await zk.locks.inspect(path)).queue.map((node) => node.data.pid);

  /** Freezes the agent until the server has expired its session and removed its queue node. */
  const freezeUntilExpired = async (agent: LockAgent, path: string): Promise<void> => {
    agent.child.kill('SIGSTOP');
    await eventually('the frozen waiter node is removed by session expiry', async () => {
      const queue = (await zk.locks.inspect(path)).queue;
      return !queue.some((node) => node.sessionId === agent.sessionId);
    });
  };

  it('queues again in a new session and acquires after the holder releases', async () => {
    const path = `${zk.root}/recover`;
    const holder = await zk.locks.acquire(path);
    const waiter = await LockAgent.start({ sessionTimeoutMs: WAITER_SESSION_MS });
    const reply = waiter.send({ op: 'acquire', path });
    await eventually('waiter queued', async () => (await queuedPids(path)).includes(waiter.pid));

    await freezeUntilExpired(waiter, path);
    waiter.child.kill('SIGCONT');
    await eventually(
      'waiter queued again under a new session',
      async () => {
        const queue = (await zk.locks.inspect(path)).queue;
        return queue.some(
          (node) => node.data.pid === waiter.pid && node.sessionId !== waiter.sessionId,
        );
      },
      scaled(20_000),
    );

    await holder.release();
    const token = tokenOf(await reply);
    expect(token).toBeGreaterThan(holder.fencingToken);
    await waiter.release(path);
    await waiter.close();
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('fails with LockTimeoutError when waitTimeoutMs passed while frozen, leaving no node', async () => {
    const path = `${zk.root}/timeout`;
    const holder = await zk.locks.acquire(path);
    const waiter = await LockAgent.start({ sessionTimeoutMs: WAITER_SESSION_MS });
    const sentAt = Date.now();
    const waitTimeoutMs = 2_000;
    const reply = waiter.send({ op: 'acquire', path, waitTimeoutMs });
    await eventually('waiter queued', async () => (await queuedPids(path)).includes(waiter.pid));

    await freezeUntilExpired(waiter, path);
    await eventually(
      'the wait timeout has passed',
      () => Date.now() - sentAt > waitTimeoutMs + 500,
    );
    waiter.child.kill('SIGCONT');

    const answer: AgentReply = await reply;
    expect(answer).toMatchObject({ type: 'error', name: 'LockTimeoutError' });
    // A later request proves the agent has a working session again; its old wait left nothing.
    // (A try fails at once until the new session is connected: try-outage.e2e-spec.ts.)
    await eventually(
      'a try succeeds on the new session',
      async () =>
        (await waiter.send({ op: 'tryAcquire', path: `${zk.root}/probe` })).type === 'tried',
    );
    await waiter.release(`${zk.root}/probe`);
    expect(await queuedPids(path)).toEqual([]);
    expect(await zk.admin.children(path)).toHaveLength(1);

    await holder.release();
    await waiter.close();
    expect(await zk.admin.children(path)).toEqual([]);
  });
});
