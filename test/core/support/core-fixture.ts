/**
 * The setup core e2e specs share on the run's ZooKeeper: a root path of the file's own, a ZkAdmin
 * to look at znodes, and (with useCoreFixture) a ZkLockClient and lock-agent processes. Hooks
 * for the enclosing describe block; everything is closed and the root removed after its tests.
 */
import { ZkLockClient, ZkLockClientOptions } from '../../../lib';
import { killAllFixtures, LockAgent } from './agents';
import { testRoot, ZkAdmin, zkConnectFromEnv } from './zk-admin';

/** Session timeout of the fixture's client and agents, unless the spec gives its own. */
const SESSION_MS = 10_000;

export interface TestRootFixture {
  /** `/test-<name>-<random>`; removed with everything below it after the tests. */
  readonly root: string;
  /** Connected by beforeAll. */
  admin: ZkAdmin;
}

export interface CoreFixture extends TestRootFixture {
  /** Connected by beforeAll. */
  locks: ZkLockClient;
  /** A lock-agent process (its own ZkLockClient), closed after the tests. */
  startAgent(options?: Partial<ZkLockClientOptions>): Promise<LockAgent>;
}

/** A root and a ZkAdmin; fixture processes still running after the tests are killed. */
export function useTestRoot(name: string): TestRootFixture {
  return register(name, undefined);
}

/** useTestRoot plus a ZkLockClient (`clientOptions` over a 10 s session) and startAgent(). */
export function useCoreFixture(
  name: string,
  clientOptions: Partial<ZkLockClientOptions> = {},
): CoreFixture {
  return register(name, clientOptions);
}

function register(
  name: string,
  clientOptions: Partial<ZkLockClientOptions> | undefined,
): CoreFixture {
  const agents: LockAgent[] = [];
  const startAgent = async (options: Partial<ZkLockClientOptions> = {}): Promise<LockAgent> => {
    const agent = await LockAgent.start({ sessionTimeoutMs: SESSION_MS, ...options });
    agents.push(agent);
    return agent;
  };
  const fixture = { root: testRoot(name), startAgent } as CoreFixture;

  beforeAll(async () => {
    if (clientOptions) {
      fixture.locks = await ZkLockClient.connect({
        connectionString: zkConnectFromEnv(),
        sessionTimeoutMs: SESSION_MS,
        ...clientOptions,
      });
    }
    fixture.admin = await ZkAdmin.connect(zkConnectFromEnv());
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((agent) => agent.close()));
    await killAllFixtures();
    await fixture.locks?.close();
    await fixture.admin?.removeTree(fixture.root);
    fixture.admin?.close();
  });

  return fixture;
}
