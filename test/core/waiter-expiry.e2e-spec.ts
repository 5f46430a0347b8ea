/**
 * Issue #2 §5.7: a waiting process is frozen (SIGSTOP, like a long GC pause) until ZooKeeper
 * expires its session and deletes its queue node. When it wakes up it either queues again in a
 * new session and eventually gets the lock, or, if its waitTimeoutMs has passed, fails with
 * LockTimeoutError and leaves nothing behind.
 */
import { ZkLockClient } from '../../lib';
import type { AgentReply } from './fixtures/lock-agent';
import { killAllFixtures, LockAgent, tokenOf } from './support/agents';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from './support/zk-admin';

const WAITER_SESSION_MS = 1_500;

describe('a waiter whose session expires', () => {
  const root = testRoot('waiter-expiry');
  let locks: ZkLockClient;
  let admin: ZkAdmin;

  beforeAll(async () => {
    locks = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessionTimeoutMs: 10_000,
    });
    admin = await ZkAdmin.connect(zkConnectFromEnv());
  });

  afterAll(async () => {
    await killAllFixtures();
    await locks.close();
    await admin.removeTree(root);
    admin.close();
  });

  const queuedPids = async (path: string): Promise<unknown[]> =>
    (await locks.inspect(path)).queue.map((node) => node.data.pid);

  /** Freezes the agent until the server has expired its session and removed its queue node. */
  const freezeUntilExpired = async (agent: LockAgent, path: string): Promise<void> => {
    agent.child.kill('SIGSTOP');
    await eventually('the frozen waiter node is removed by session expiry', async () => {
      const queue = (await locks.inspect(path)).queue;
      return !queue.some((node) => node.sessionId === agent.sessionId);
    });
  };

  it('queues again in a new session and acquires after the holder releases', async () => {
    const path = `${root}/recover`;
    const holder = await locks.acquire(path);
    const waiter = await LockAgent.start({ sessionTimeoutMs: WAITER_SESSION_MS });
    const reply = waiter.send({ op: 'acquire', path });
    await eventually('waiter queued', async () => (await queuedPids(path)).includes(waiter.pid));

    await freezeUntilExpired(waiter, path);
    waiter.child.kill('SIGCONT');
    await eventually(
      'waiter queued again under a new session',
      async () => {
        const queue = (await locks.inspect(path)).queue;
        return queue.some(
          (node) => node.data.pid === waiter.pid && node.sessionId !== waiter.sessionId,
        );
      },
      20_000,
    );

    await holder.release();
    const token = tokenOf(await reply);
    expect(token).toBeGreaterThan(holder.fencingToken);
    await waiter.release(path);
    await waiter.close();
    expect(await admin.children(path)).toEqual([]);
  });

  it('fails with LockTimeoutError when waitTimeoutMs passed while frozen, leaving no node', async () => {
    const path = `${root}/timeout`;
    const holder = await locks.acquire(path);
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
    expect(await waiter.send({ op: 'tryAcquire', path: `${root}/probe` })).toMatchObject({
      type: 'tried',
    });
    await waiter.release(`${root}/probe`);
    expect(await queuedPids(path)).toEqual([]);
    expect(await admin.children(path)).toHaveLength(1);

    await holder.release();
    await waiter.close();
    expect(await admin.children(path)).toEqual([]);
  });
});
