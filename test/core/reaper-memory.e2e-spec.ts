/**
 * Issue #19 §4: two clients that take many distinct paths in turn (per-order keys across two
 * instances) keep nothing about a path in memory once it is gone from ZooKeeper. The first
 * client created each path; the second, which used it last, removed it: the first client's
 * cleanup must not remember it (it kept ~130 bytes per path in its set of created
 * directories, forever).
 */
import { ZkLockClient } from '../../lib';
import { useTestRoot } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

const PATHS = 200;

interface ReaperInternals {
  /** How many paths it remembers (scheduled, under way or known): what this test is about. */
  remembered: number;
  due: Map<string, number>;
  inflight: Set<unknown>;
}
const reaperOf = (client: ZkLockClient): ReaperInternals =>
  (client as unknown as { reaper: ReaperInternals }).reaper;
const remembered = (client: ZkLockClient): number => reaperOf(client).remembered;
/** Nothing scheduled or under way: its cleanup has looked at every path it was given. */
const quiet = (client: ZkLockClient): boolean =>
  reaperOf(client).due.size === 0 && reaperOf(client).inflight.size === 0;

describe('memory per contended path', () => {
  const zk = useTestRoot('reaper-memory');
  const clients: ZkLockClient[] = [];
  const connect = async (): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace: zk.root,
      parentCleanupDelayMs: 50,
    });
    clients.push(client);
    return client;
  };

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it(`two clients taking ${PATHS} distinct paths in turn remember none once they are gone`, async () => {
    const first = await connect();
    const second = await connect();
    for (let i = 0; i < PATHS; i++) {
      const path = `/order-${i}`;
      const held = await first.acquire(path);
      const waiting = second.acquire(path, { waitTimeoutMs: 30_000 });
      // The second client's node is queued behind ours before we let go, so the path is busy
      // when the first client's cleanup looks at it, and the second one removes it.
      await eventually(
        'the second client queued',
        async () => (await zk.admin.children(`${zk.root}${path}`)).length === 2,
      );
      await held.release();
      const next = await waiting;
      // The first client's cleanup finds the path in use by the second, and leaves it to it.
      await eventually('the first client looked at the path', () => quiet(first));
      await next.release();
    }
    await eventually(
      'every path is gone from ZooKeeper',
      async () => (await zk.admin.children(zk.root)).length === 0,
    );
    await eventually('both cleanups are done', () => quiet(first) && quiet(second));
    expect(remembered(first)).toBe(0);
    expect(remembered(second)).toBe(0);
  });
});
