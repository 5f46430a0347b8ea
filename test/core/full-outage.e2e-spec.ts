/**
 * After a full outage, the nodes of the sessions our clients declared lost
 * blocked every lock until the server expired those sessions. A restarted server restores the
 * sessions of its log and expires them a session timeout after its start; meanwhile their nodes
 * (a lost holder's, and the nodes its waiters had before they queued again in a new session)
 * stay first in line. Here the outage lasts past the lost sessions' own attempts to close
 * themselves on the server (a session timeout after the loss), in three processes: two holders
 * of their own path and a process waiting for both paths. The first grant after the restart must
 * not wait for the server's expiry: the old sessions come back to close themselves (the server's
 * log shows them established again and never expired), and their nodes are gone.
 */
import { readFileSync } from 'node:fs';
import type { AgentReply } from './fixtures/lock-agent';
import { killAllFixtures, LockAgent, nextMessage } from './support/agents';
import { eventually, testRoot, ZkAdmin } from './support/zk-admin';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { scaled } from '../support/time-scale';

const SESSION_MS = 8_000;

describe('a full outage past the session timeout', () => {
  const root = testRoot('full-outage');
  let server: ZooKeeperServer;
  const agents: LockAgent[] = [];

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    // The server's own account of each session: it logs the ones it expires.
    server = await ZooKeeperServer.start({
      jvmFlags: ['-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.ZooKeeperServer=info'],
    });
  });

  afterEach(async () => {
    await Promise.allSettled(agents.map((agent) => agent.close()));
    agents.length = 0;
    await killAllFixtures();
  });

  afterAll(async () => {
    await server?.stop(); // this file's own server: its data goes with it
  });

  const startAgent = async (): Promise<LockAgent> => {
    const agent = await LockAgent.start({
      connectionString: server.connectionString,
      sessionTimeoutMs: SESSION_MS,
      connectTimeoutMs: scaled(120_000), // waiters keep waiting through the outage
    });
    agents.push(agent);
    return agent;
  };

  const nodesOf = async (paths: string[]): Promise<string[]> => {
    const admin = await ZkAdmin.connect(server.connectionString);
    try {
      const lists = await Promise.all(paths.map((path) => admin.children(path)));
      return lists.flatMap((children, i) => children.map((child) => `${paths[i]}/${child}`));
    } finally {
      admin.close();
    }
  };

  /** Whether the server's log says it expired the session `id` (hex, as the agents give it). */
  const expiredByServer = (id: string): boolean =>
    readFileSync(server.members[0].logFile, 'utf8').includes(`Expiring session 0x${id},`);

  it("grants the first lock after the restart without waiting for the server to expire the lost sessions' nodes", async () => {
    const paths = [`${root}/p`, `${root}/q`];
    const [holderP, holderQ, waiter] = await Promise.all([
      startAgent(),
      startAgent(),
      startAgent(),
    ]);
    await holderP.acquire(paths[0]);
    await holderQ.acquire(paths[1]);
    const grants = paths.map((path) => waiter.send({ op: 'acquire', path }));
    await eventually('the waiter is queued on both paths', async () => {
      return (await nodesOf(paths)).length === 4;
    });
    const oldNodes = await nodesOf(paths);
    const oldSessions = [holderP, holderQ, waiter].map((agent) => agent.sessionId);

    const lost = [holderP, holderQ].map((agent) =>
      nextMessage<AgentReply>(agent.child, (m) => m.type === 'lost'),
    );
    await server.members[0].stop();
    await Promise.all(lost);
    // Down for another session timeout and more: a lost session's own attempts to close itself
    // on the server used to end by then, and the server restores it from its log.
    const lostAt = Date.now();
    await eventually(
      'the outage outlasts the lost sessions',
      () => Date.now() - lostAt > SESSION_MS + 2_000,
      scaled(60_000),
    );

    const restartedAt = Date.now();
    server.members[0].start();
    const firstGrant = Promise.race(grants);
    await server.members[0].waitServing();
    const servingMs = Date.now() - restartedAt;
    expect(await firstGrant).toMatchObject({ type: 'acquired' });
    const grantMs = Date.now() - restartedAt;
    // Granted because our clients closed their old sessions, not because the server expired them.
    expect(oldSessions.filter(expiredByServer)).toEqual([]);
    process.stdout.write(
      `[full-outage] restart -> first grant: ${grantMs} ms (server serving after ${servingMs} ms, ` +
        `session timeout ${SESSION_MS} ms)\n`,
    );

    expect(await Promise.all(grants)).toMatchObject([{ type: 'acquired' }, { type: 'acquired' }]);
    const left = await nodesOf(paths);
    expect(left.filter((node) => oldNodes.includes(node))).toEqual([]);
    expect(left).toHaveLength(2); // the waiter's new nodes
    expect(oldSessions.filter(expiredByServer)).toEqual([]);
    for (const path of paths) await waiter.release(path);
    await Promise.all([holderP.release(paths[0]), holderQ.release(paths[1])]);
  });
});
