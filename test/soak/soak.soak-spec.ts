/**
 * Soak and limits (`npm run test:soak`; CI runs it after `npm test`):
 * - 100,000 lock cycles over 10,000 distinct paths from 4 processes leave no znode behind, the
 *   server's watch count where it started, and each client's heap flat (RSS reported);
 * - 10,000 callers waiting on one path in one process cost ZooKeeper at most `maxNodesPerPath`
 *   nodes of that process and bounded memory, are served FIFO, and cancelling half of them leaves
 *   nothing behind.
 * - two clients that take 18,000 distinct paths in turn (per-order keys across two
 *   instances, one creates a path and the other removes it) keep nothing per path: the heap's
 *   slope over rounds of fresh paths stays under a few bytes per path.
 * Figures are printed (and go into RELIABILITY.md); only the properties decide pass/fail.
 * SOAK_BROKEN=retain keeps something per path (each worker's lock handles, this file's own
 * handles in the two-client test): a deliberate leak, to show the heap checks catch one.
 */
import { setMaxListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LockAbortedError, LockHandle, ZkLockClient } from '../../lib';
import { CLIENT_DEFAULTS } from '../../lib/core/client/client-options';
import { exited, killAllFixtures, nextMessage, spawnFixture } from '../core/support/agents';
import { snapshotResources } from '../core/support/resources';
import { eventually, testRoot, ZkAdmin } from '../core/support/zk-admin';
import { scaled } from '../support/time-scale';
import { mntr, ZooKeeperServer } from '../support/zookeeper';

const PROCESSES = 4;
const CYCLES = 100_000;
const PATHS = 10_000;
const CONCURRENCY = 32;
const WAITERS = 10_000;
const MB = 1024 * 1024;
const TURN_ROUNDS = 6;
const TURN_PATHS = 3_000;
const TURN_CONCURRENCY = 16;
/**
 * Bytes per path the heap may grow by (its slope over the rounds): noise only. A cleanup that
 * remembers its created directories keeps ~130 bytes per path; a kept lock handle is several
 * hundred.
 */
const TURN_SLOPE_LIMIT = 32;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapNow = async (): Promise<number> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().heapUsed;
};
const mb = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;

/** Slope of y over x, robust to one noisy point: the median of every pair's slope (Theil-Sen). */
function slope(xs: number[], ys: number[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) slopes.push((ys[j] - ys[i]) / (xs[j] - xs[i]));
  }
  slopes.sort((a, b) => a - b);
  const mid = slopes.length >> 1;
  return slopes.length % 2 ? slopes[mid] : (slopes[mid - 1] + slopes[mid]) / 2;
}

interface WorkerResult {
  cycles: number;
  elapsedMs: number;
  badTokens: number;
  heapBefore: number;
  heapAfter: number;
  rssBefore: number;
  rssAfter: number;
}

describe('soak', () => {
  let server: ZooKeeperServer;
  let admin: ZkAdmin;
  const roots: string[] = [];

  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    admin = await ZkAdmin.connect(server.connectionString);
  });

  afterAll(async () => {
    await killAllFixtures();
    for (const root of roots) await admin.removeTree(root);
    admin.close();
    await server.stop();
  });

  const watchCount = async (): Promise<number> =>
    (await mntr(server.members[0].clientPort)).zk_watch_count;

  // sessions 4: each process spreads its paths over 4 sessions (docs/design.md "Sessions as a pool").
  it.each([1, 4])(
    `${CYCLES.toLocaleString('en')} cycles over ${PATHS.toLocaleString('en')} paths from ${PROCESSES} processes leave no znode, no watch, flat memory (sessions: %i)`,
    async (sessions) => {
      const root = testRoot(`soak-cycles-${sessions}`);
      roots.push(root);
      const watchesBefore = await watchCount();
      const workers = Array.from({ length: PROCESSES }, (_, i) =>
        spawnFixture('soak-worker', {
          ZK_CONNECT: server.connectionString,
          NAMESPACE: root,
          PATHS: String(PATHS),
          CYCLES: String(CYCLES / PROCESSES),
          CONCURRENCY: String(CONCURRENCY),
          OFFSET: String((i * PATHS) / PROCESSES / 2), // half of each range is shared with the next
          SESSIONS: String(sessions),
        }),
      );
      await Promise.all(
        workers.map((w) => nextMessage(w, (m: { type: string }) => m.type === 'ready')),
      );
      const results = workers.map((w) =>
        nextMessage<WorkerResult & { type: string }>(w, (m) => m.type === 'result'),
      );
      const started = Date.now();
      workers.forEach((w) => w.send('go'));
      const figures = await Promise.all(results);
      const elapsedMs = Date.now() - started;
      const codes = await Promise.all(workers.map(exited));
      expect(codes).toEqual(workers.map(() => 0));

      await eventually(
        'every lock path is cleaned up',
        async () => (await admin.children(root)).length === 0,
        scaled(60_000),
      );
      expect(await admin.countDescendants(root)).toBe(0);
      await eventually(
        'the server watch count is back',
        async () => (await watchCount()) === watchesBefore,
      );
      expect(await watchCount()).toBe(watchesBefore);

      const lines = figures.map(
        (f, i) =>
          `  process ${i}: ${f.cycles} cycles in ${f.elapsedMs} ms; heap ${mb(f.heapBefore)} -> ${mb(f.heapAfter)}; ` +
          `RSS ${mb(f.rssBefore)} -> ${mb(f.rssAfter)}`,
      );
      console.log(
        `soak: ${CYCLES} cycles over ${PATHS} paths, ${PROCESSES} processes x ${CONCURRENCY} callers, ` +
          `${sessions} session(s) each, ` +
          `${elapsedMs} ms (${Math.round((CYCLES * 1000) / elapsedMs)} cycles/s); watches ${watchesBefore} -> ` +
          `${await watchCount()}; znodes left 0\n${lines.join('\n')}`,
      );
      for (const f of figures) {
        expect(f.badTokens).toBe(0);
        // Flat: what 25,000 cycles over 10,000 paths leave on the heap after GC, when every path
        // has been cleaned up, is noise (a few hundred KB), not one object per path or per cycle
        // (10,000 paths x even 200 bytes would be 2 MB).
        expect(f.heapAfter - f.heapBefore).toBeLessThan(2 * MB);
      }
    },
  );

  it(`${WAITERS.toLocaleString('en')} callers waiting on one path: bounded nodes and memory, FIFO, half cancelled leaves nothing`, async () => {
    const root = testRoot('soak-waiters');
    roots.push(root);
    const locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      namespace: root,
      sessionTimeoutMs: 30_000,
      parentCleanupDelayMs: 100,
      // Above the default caps (1,000 per path): this test measures that many.
      maxWaitersPerPath: WAITERS,
      maxWaiters: WAITERS,
    });
    // Another process's node makes ours queue; a second client (session) does the same.
    const other = await ZkLockClient.connect({
      connectionString: server.connectionString,
      namespace: root,
    });
    try {
      const path = '/one-path';
      const blocker = await other.acquire(path);
      const heapBefore = await heapNow();
      const before = snapshotResources({ client: locks });

      const served: number[] = [];
      const controllers: AbortController[] = [];
      const ask = (i: number): Promise<string> => {
        const controller = new AbortController();
        setMaxListeners(4, controller.signal);
        controllers.push(controller);
        return locks.acquire(path, { signal: controller.signal }).then(
          async (lock: LockHandle) => {
            served.push(i);
            await lock.release();
            return 'served';
          },
          (err: Error) =>
            err instanceof LockAbortedError ? 'aborted' : `${err.name}: ${err.message}`,
        );
      };
      // They arrive over several event-loop turns, as requests do: the first batch gets a node,
      // later arrivals a second one, and then no more (maxNodesPerPath).
      const outcomes: Promise<string>[] = [];
      for (let i = 0; i < WAITERS; i++) {
        outcomes.push(ask(i));
        if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      let ourNodes = 0;
      const countOurs = async (): Promise<number> => {
        ourNodes = Math.max(ourNodes, (await locks.inspect(path)).queue.length);
        return ourNodes;
      };
      await eventually('our waiters have their nodes', async () => (await countOurs()) >= 1);
      for (let i = 0; i < 20; i++) await countOurs(); // no more appear
      const heapWaiting = await heapNow();
      const perWaiter = (heapWaiting - heapBefore) / WAITERS;

      controllers.forEach((c, i) => {
        if (i % 2 === 1) c.abort(new Error('cancelled by the test'));
      });
      await blocker.release();
      const results = await Promise.all(outcomes);
      await other.close();

      const counts = results.reduce<Record<string, number>>((acc, r) => {
        acc[r] = (acc[r] ?? 0) + 1;
        return acc;
      }, {});
      console.log(
        `soak: ${WAITERS} waiters on one path: ${ourNodes} znodes of ours while waiting; heap ` +
          `${mb(heapBefore)} -> ${mb(heapWaiting)} (${Math.round(perWaiter)} bytes per waiter); ` +
          `outcomes ${JSON.stringify(counts)}`,
      );
      expect(ourNodes).toBeLessThanOrEqual(CLIENT_DEFAULTS.maxNodesPerPath);
      expect(ourNodes).toBeGreaterThanOrEqual(1);
      // A waiter is a promise, its queue entry and an abort listener: well under 4 KB each.
      expect(perWaiter).toBeLessThan(4096);
      expect(counts).toEqual({ served: WAITERS / 2, aborted: WAITERS / 2 });
      // FIFO: the survivors were served in the order they asked.
      expect(served).toEqual(Array.from({ length: WAITERS / 2 }, (_, k) => 2 * k));

      await eventually(
        'the path is cleaned up',
        async () => (await admin.children(root)).length === 0,
      );
      const after = snapshotResources({ client: locks });
      expect(after.listeners).toEqual(before.listeners);
      for (const c of controllers) {
        expect(snapshotResources({ s: c.signal }).listeners['s:abort']).toBe(0);
      }
    } finally {
      await other.close();
      await locks.close();
    }
  });
  it(`two clients taking ${(TURN_ROUNDS * TURN_PATHS).toLocaleString('en')} distinct paths in turn: no memory per path`, async () => {
    const root = testRoot('soak-turns');
    roots.push(root);
    const connect = (parentCleanupDelayMs: number): Promise<ZkLockClient> =>
      ZkLockClient.connect({
        connectionString: server.connectionString,
        namespace: root,
        sessionTimeoutMs: 30_000,
        parentCleanupDelayMs,
      });
    // The first client creates each path and looks at it for cleanup at once, while the second
    // still holds it: the second client is the one that removes it.
    const first = await connect(0);
    const second = await connect(100);
    const retained: unknown[] = [];
    const retain = process.env.SOAK_BROKEN === 'retain';
    try {
      const turn = async (path: string): Promise<void> => {
        let next: Promise<LockHandle> | undefined;
        await first.withLock(path, async () => {
          next = second.acquire(path, { waitTimeoutMs: 60_000 });
          // Let go only once the second client waits in line (its node is behind ours).
          while ((await first.inspect(path)).queue.length === 0) {
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
        });
        const lock = await next!;
        if (retain) retained.push(lock);
        await lock.release();
      };
      const round = async (r: number): Promise<void> => {
        const paths = Array.from({ length: TURN_PATHS }, (_, i) => `/r${r}-order-${i}`);
        await Promise.all(
          Array.from({ length: TURN_CONCURRENCY }, async (_, w) => {
            for (let i = w; i < paths.length; i += TURN_CONCURRENCY) await turn(paths[i]);
          }),
        );
        await eventually(
          'every path of the round is gone',
          async () => (await admin.children(root)).length === 0,
          scaled(60_000),
        );
      };
      await round(0); // warm-up: code compiled, pools at size
      const heaps = [await heapNow()];
      const started = Date.now();
      for (let r = 1; r <= TURN_ROUNDS; r++) {
        await round(r);
        heaps.push(await heapNow());
      }
      const elapsedMs = Date.now() - started;
      const xs = heaps.map((_, i) => i * TURN_PATHS);
      const bytesPerPath = slope(xs, heaps);
      console.log(
        `soak: two clients, ${TURN_ROUNDS} x ${TURN_PATHS} distinct paths in turn in ${elapsedMs} ms; ` +
          `heap after each round ${heaps.map((h) => (h / MB).toFixed(2)).join(', ')} MB; slope ${bytesPerPath.toFixed(1)} ` +
          `bytes per path (limit ${TURN_SLOPE_LIMIT})`,
      );
      expect(bytesPerPath).toBeLessThan(TURN_SLOPE_LIMIT);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
