/**
 * After 10,000 lock cycles over 1,000 distinct paths nothing is left behind:
 * no znodes under the test root, no extra server watches, no extra timers, sockets or listeners.
 */
import { setMaxListeners } from 'node:events';
import { LockLostError, ZkLockClient } from '../../lib';
import { OP } from '../../lib/core/zookeeper/jute';
import { ZkWire } from '../../lib/core/zookeeper/zk-wire';
import { scaled } from '../support/time-scale';
import { mntr, ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { snapshotResources } from './support/resources';
import { eventually, testRoot, ZkAdmin } from './support/zk-admin';

const CYCLES = 10_000;
const PATHS = 1_000;
const CONCURRENCY = 50;

describe('resource hygiene over many lock cycles', () => {
  const root = testRoot('leaks');
  let server: ZooKeeperServer;
  let admin: ZkAdmin;
  const clients: ZkLockClient[] = [];

  const connect = async (parentCleanupDelayMs?: number): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: 10_000,
      namespace: root,
      parentCleanupDelayMs,
    });
    clients.push(client);
    return client;
  };

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    admin = await ZkAdmin.connect(server.connectionString);
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    admin.close();
    await server.stop(); // this file's own server: its data goes with it
  });

  const port = (): number => server.members[0].clientPort;
  const watchCount = async (): Promise<number> => (await mntr(port())).zk_watch_count;

  /** Polls until `done()` or 15 s (scaled), then returns; the caller asserts the final values. */
  const settle = async (done: () => Promise<boolean>): Promise<void> => {
    const until = Date.now() + scaled(15_000);
    while (Date.now() < until && !(await done())) await new Promise((r) => setTimeout(r, 50));
  };

  it('10,000 cycles over 1,000 paths leave no znodes, watches, timers or listeners', async () => {
    const locks = await connect(100);
    // Up to CONCURRENCY acquires listen to this signal at once; that is expected, not a leak.
    const shared = new AbortController();
    setMaxListeners(CONCURRENCY + 10, shared.signal);
    await locks.withLock('/warm-up', () => undefined);
    await settle(async () => (await admin.countDescendants(root)) === 0);
    const watchesBefore = await watchCount();
    const before = snapshotResources({ client: locks, process, signal: shared.signal });

    let completed = 0;
    const worker = async (w: number): Promise<void> => {
      for (let k = w; k < CYCLES; k += CONCURRENCY) {
        const path = `/p-${(k * 7) % PATHS}`;
        if (k % 3 === 0) {
          const lock = await locks.acquire(path, { waitTimeoutMs: 30_000, signal: shared.signal });
          await lock.release();
        } else if (k % 3 === 1) {
          await locks.withLock(path, () => undefined);
        } else {
          await (await locks.tryAcquire(path))?.release();
        }
        completed++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
    expect(completed).toBe(CYCLES);

    await settle(
      async () =>
        (await admin.countDescendants(root)) === 0 && (await watchCount()) === watchesBefore,
    );
    expect(await admin.countDescendants(root)).toBe(0);
    expect(await watchCount()).toBe(watchesBefore);
    // A leaked timer or socket stays; a transient one (a socket's timeout being re-armed, a
    // request timer still due) goes within a few seconds.
    const snapshot = () => snapshotResources({ client: locks, process, signal: shared.signal });
    const withinBefore = () =>
      Object.entries(snapshot().active).every(([type, count]) => count <= before.active[type]);
    await settle(async () => withinBefore());
    const after = snapshot();
    for (const [type, count] of Object.entries(after.active)) {
      expect([type, count]).toEqual([type, Math.min(count, before.active[type])]);
    }
    expect(after.listeners).toEqual(before.listeners);

    await locks.close();
    expect(await admin.countDescendants(root)).toBe(0);
  });

  it('close() right after use leaves no lock nodes behind and releases held locks', async () => {
    const locks = await connect(); // default parentCleanupDelayMs: cleanups still pending at close
    for (let i = 0; i < 20; i++) await locks.withLock(`/closing-${i}`, () => undefined);
    const held = await locks.acquire('/held-at-close');
    await locks.close();
    // A lock still held at close is released, and its signal tells the work to stop.
    expect(held.state).toBe('released');
    expect(held.signal.aborted).toBe(true);
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect((held.signal.reason as LockLostError).reason).toBe('client-closed');
    expect(await admin.children(root)).toEqual([]);
  });

  it('close() while a node is still being created deletes it and still removes the lock path', async () => {
    const locks = await connect();
    const held = await locks.acquire('/creating-at-close');
    // How many creates of lock nodes under the path this client sends from now on.
    let creates = 0;
    const request = ZkWire.prototype.request;
    ZkWire.prototype.request = function (this: ZkWire, type, frame, answer) {
      if (type === OP.CREATE && frame.includes('/creating-at-close/')) creates++;
      return request.call(this, type, frame, answer);
    };
    try {
      server.members[0].pause(); // requests from now on stay in flight until resume
      const waiting = locks.acquire('/creating-at-close'); // a second node of ours is created
      const rejected = waiting.then(
        () => 'acquired',
        (err: Error) => err.name,
      );
      await eventually('its create is on the wire', () => creates === 1);
      const closing = locks.close();
      // close() gives the caller up at once; its create is still unanswered (the server is paused).
      expect(await rejected).toBe('ClientClosedError');
      server.members[0].resume();
      await closing;
    } finally {
      ZkWire.prototype.request = request;
    }
    expect(held.state).toBe('released');
    expect(await admin.children(root)).toEqual([]);
  });
});
