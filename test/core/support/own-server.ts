/**
 * For specs that pause or stop ZooKeeper: a standalone server of their own (so no other test
 * file is affected), a ZkAdmin, clients and lock-agent processes closed after each test, and a
 * helper that freezes the server (SIGSTOP) for a while. Hooks for the enclosing describe block.
 */
import { ZkLockClient, ZkLockClientOptions } from '../../../lib';
import { ZooKeeperOptions, ZooKeeperServer } from '../../support/zookeeper';
import { printServerLogOnFailure } from '../../support/server-log-on-failure';
import { killAllFixtures, LockAgent } from './agents';
import { eventually, testRoot, ZkAdmin } from './zk-admin';
import { scaled } from '../../support/time-scale';

export interface OwnServerFixture {
  /** `/test-<name>-<random>`; removed with everything below it after the tests. */
  readonly root: string;
  /** Started by beforeAll. */
  server: ZooKeeperServer;
  admin: ZkAdmin;
  /** A long-session client that only looks at queues (it outlives every pause); if asked for. */
  observer: ZkLockClient;
  /** A client (closed after the test) with `sessionTimeoutMs` unless `options` says otherwise. */
  connect(options?: Partial<ZkLockClientOptions>): Promise<ZkLockClient>;
  /** A lock-agent process on this server (closed after the test). */
  startAgent(): Promise<LockAgent>;
  /** No node is left under `path`, and another process takes the lock at once. */
  expectFreeForOthers(path: string): Promise<void>;
  /** Freezes the server until `until` holds (or `timeoutMs` passes), then resumes it. */
  freezeServerUntil(what: string, until: () => boolean, timeoutMs?: number): Promise<void>;
}

export function useOwnServer(
  name: string,
  options: {
    sessionTimeoutMs: number;
    observer?: boolean;
    /** Options of the server, asked for when it starts (e.g. a data dir to start from). */
    server?: () => ZooKeeperOptions;
  },
): OwnServerFixture {
  let clients: ZkLockClient[] = [];
  let agents: LockAgent[] = [];
  const fixture = {
    root: testRoot(name),
    async connect(overrides: Partial<ZkLockClientOptions> = {}): Promise<ZkLockClient> {
      const client = await ZkLockClient.connect({
        connectionString: fixture.server.connectionString,
        sessionTimeoutMs: options.sessionTimeoutMs,
        connectTimeoutMs: 30_000,
        ...overrides,
      });
      clients.push(client);
      return client;
    },
    async startAgent(): Promise<LockAgent> {
      const agent = await LockAgent.start({
        connectionString: fixture.server.connectionString,
        sessionTimeoutMs: options.sessionTimeoutMs,
      });
      agents.push(agent);
      return agent;
    },
    async expectFreeForOthers(path: string): Promise<void> {
      await eventually('no node is left', async () => {
        return (await fixture.admin.children(path)).length === 0;
      });
      const agent = await fixture.startAgent();
      expect(await agent.send({ op: 'tryAcquire', path })).toMatchObject({
        type: 'tried',
        token: expect.any(String),
      });
      await agent.release(path);
    },
    async freezeServerUntil(what: string, until: () => boolean, timeoutMs = scaled(30_000)) {
      fixture.server.members[0].pause();
      try {
        await eventually(what, until, timeoutMs);
      } finally {
        fixture.server.members[0].resume();
      }
    },
  } as OwnServerFixture;

  beforeAll(async () => {
    fixture.server = await ZooKeeperServer.start(options.server?.());
    fixture.admin = await ZkAdmin.connect(fixture.server.connectionString);
    if (options.observer) {
      fixture.observer = await ZkLockClient.connect({
        connectionString: fixture.server.connectionString,
        sessionTimeoutMs: 30_000,
      });
    }
  });

  printServerLogOnFailure(() => fixture.server);

  afterEach(async () => {
    fixture.server.members[0].resume(); // in case a test failed while the server was frozen
    await Promise.allSettled(agents.map((agent) => agent.close()));
    await killAllFixtures();
    await Promise.allSettled(clients.map((client) => client.close()));
    agents = [];
    clients = [];
  });

  afterAll(async () => {
    try {
      await fixture.observer?.close();
      await fixture.admin?.removeTree(fixture.root);
    } catch (err) {
      fixture.server?.printLogTails(`the clean-up failed: ${err}`);
      throw err;
    } finally {
      fixture.admin?.close();
      await fixture.server?.stop();
    }
  });

  return fixture;
}
