/**
 * `namespace` isolates applications. Processes in two namespaces lock the same
 * path at the same time without seeing each other (no exclusion, no node in the other's tree,
 * nothing in the other's inspect()), while processes of one namespace exclude as usual; no lock
 * path, however written, reaches into another namespace.
 */
import { InvalidLockPathError, ZkLockClient } from '../../lib';
import { LockAgent } from './support/agents';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from './support/zk-admin';

describe('namespace isolation', () => {
  const root = testRoot('namespace');
  const appA = `${root}/orders`;
  const appB = `${root}/orders-b`; // shares a prefix with appA on purpose
  let admin: ZkAdmin;
  const agents: LockAgent[] = [];
  const clients: ZkLockClient[] = [];
  const agentIn = async (namespace: string): Promise<LockAgent> => {
    const agent = await LockAgent.start({ namespace });
    agents.push(agent);
    return agent;
  };
  const clientIn = async (namespace: string): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({ connectionString: zkConnectFromEnv(), namespace });
    clients.push(client);
    return client;
  };

  beforeAll(async () => (admin = await ZkAdmin.connect(zkConnectFromEnv())));
  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await Promise.allSettled(clients.map((c) => c.close()));
    await admin.removeTree(root);
    admin.close();
  });

  it('two namespaces lock the same path at once and never see each other', async () => {
    const [a1, a2, b1] = await Promise.all([agentIn(appA), agentIn(appA), agentIn(appB)]);
    const path = '/locks/shared';
    const tokenA = await a1.acquire(path);
    // The other application takes "the same" lock at once: it is a different lock.
    expect(await b1.send({ op: 'tryAcquire', path })).toMatchObject({ token: expect.any(String) });
    // Within one namespace the lock still excludes.
    expect(await a2.send({ op: 'tryAcquire', path })).toMatchObject({ token: null });
    // Each holder's node is in its own tree only (a2's tried node goes right after its answer),
    // and each inspect() sees its own holder only.
    await eventually('only the holder is left in A', async () => {
      return (await admin.children(`${appA}${path}`)).length === 1;
    });
    expect(await admin.children(`${appB}${path}`)).toHaveLength(1);
    const [inA, inB] = await Promise.all([clientIn(appA), clientIn(appB)]);
    const seenByA = await inA.inspect(path);
    const seenByB = await inB.inspect(path);
    expect(seenByA.holder?.sessionId).toBe(a1.sessionId);
    expect(seenByA.queue).toEqual([]);
    expect(seenByB.holder?.sessionId).toBe(b1.sessionId);
    expect(seenByB.queue).toEqual([]);
    // Releasing in one namespace does not free (or touch) the other.
    await a1.release(path);
    expect(await a2.send({ op: 'tryAcquire', path })).toMatchObject({ token: expect.any(String) });
    expect((await inB.inspect(path)).holder?.sessionId).toBe(b1.sessionId);
    await a2.release(path);
    await b1.release(path);
    expect(tokenA).toBeGreaterThan(0n);
  });

  it('no lock path reaches into another namespace (relative segments are refused)', async () => {
    const inA = await clientIn(appA);
    for (const path of ['/../orders-b/locks/shared', '/locks/../../orders-b/x', '/./x']) {
      await expect(inA.acquire(path)).rejects.toBeInstanceOf(InvalidLockPathError);
    }
    // A lock path that starts like the other namespace stays inside this one.
    await inA.withLock('/-b/locks/shared', async () => {
      expect(await admin.exists(`${appA}/-b/locks/shared`)).toBe(true);
      expect(await admin.children(`${appB}/locks/shared`)).toEqual([]);
    });
  });
});
