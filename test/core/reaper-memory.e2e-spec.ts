/**
 * Two clients that take many distinct paths in turn (per-order keys across two
 * instances) keep nothing about a path in memory once it is gone from ZooKeeper. The first
 * client created each path; the second, which used it last, removed it: the first client's
 * cleanup must not remember it (it kept ~130 bytes per path in its set of created
 * directories, forever).
 */
import { LockAbortedError, ZkLockClient } from '../../lib';
import { useTestRoot } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

const PATHS = 200;
/** Paths taken at once (PATHS is a multiple of it). */
const BATCH = 20;

interface ReaperInternals {
  /** How many paths it remembers (scheduled, under way or known): what this test is about. */
  remembered: number;
  due: Map<string, number>;
  inflight: Set<unknown>;
}
const reaperOf = (client: ZkLockClient): ReaperInternals =>
  (client as unknown as { reaper: ReaperInternals }).reaper;
const remembered = (client: ZkLockClient): number => reaperOf(client).remembered;
/** The lock paths the client keeps a queue of local callers for. */
const queuedPaths = (client: ZkLockClient): string[] =>
  (client as unknown as { queues: { all(): { lockPath: string }[] } }).queues
    .all()
    .map((queue) => queue.lockPath);
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
    // BATCH paths at a time, each through the same steps in turn (they mostly wait on ZooKeeper).
    for (let from = 0; from < PATHS; from += BATCH) {
      const paths = Array.from({ length: BATCH }, (_, k) => `/order-${from + k}`);
      const held = await Promise.all(paths.map((path) => first.acquire(path)));
      const waiting = paths.map((path) => second.acquire(path, { waitTimeoutMs: 30_000 }));
      // The second client's node is queued behind ours before we let go, so the path is busy
      // when the first client's cleanup looks at it, and the second one removes it.
      await eventually('the second client queued on every path', async () => {
        const queues = await Promise.all(
          paths.map((path) => zk.admin.children(`${zk.root}${path}`)),
        );
        return queues.every((nodes) => nodes.length === 2);
      });
      await Promise.all(held.map((lock) => lock.release()));
      const next = await Promise.all(waiting);
      // The first client's cleanup finds the paths in use by the second, and leaves them to it.
      await eventually('the first client looked at the paths', () => quiet(first));
      await Promise.all(next.map((lock) => lock.release()));
    }
    await eventually(
      'every path is gone from ZooKeeper',
      async () => (await zk.admin.children(zk.root)).length === 0,
    );
    await eventually('both cleanups are done', () => quiet(first) && quiet(second));
    expect(remembered(first)).toBe(0);
    expect(remembered(second)).toBe(0);
  });

  it('a caller refused at once (its signal aborted already) keeps nothing of its path', async () => {
    const locks = await connect();
    const aborted = AbortSignal.abort();
    for (let i = 0; i < 10; i++) {
      await expect(locks.acquire(`/refused-${i}`, { signal: aborted })).rejects.toThrow(
        LockAbortedError,
      );
      await expect(
        locks.readLock(`/refused-read-${i}`).acquire({ signal: aborted }),
      ).rejects.toThrow(LockAbortedError);
    }
    expect(queuedPaths(locks)).toEqual([]);
    expect(remembered(locks)).toBe(0); // nothing was made, so nothing is due for cleanup
  });
});
