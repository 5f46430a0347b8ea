/**
 * Issue #12 finding 7: a request in doubt (no answer in time, or the connection dropped) while
 * the lock path is being created. The waiter must not fail with a raw ZooKeeper error: it retries
 * within its wait, and a parent the server created during the uncertain request is cleaned up
 * like any other. No raw ZkRequestError reaches a caller of acquire or inspect on any path.
 * Runs its own server: the test freezes it (SIGSTOP) at the exact moment a parent's create is
 * sent (a spy on the session's create only observes; the server really is frozen).
 */
import { ZkLockError, ZooKeeperUnavailableError } from '../../lib';
import { ZkSession } from '../../lib/core/zookeeper/zk-session';
import { useOwnServer } from './support/own-server';
import { eventually } from './support/zk-admin';
import { vi } from 'vitest';

const SESSION_MS = 9_000; // the clock notices a frozen server after 6 s: the freeze is shorter
const REQUEST_MS = 500;

describe('faults while a lock path is created', () => {
  const zk = useOwnServer('mkdirp-faults', { sessionTimeoutMs: SESSION_MS });
  afterEach(() => vi.restoreAllMocks());

  /**
   * When the create of `target` is sent: 'freeze' the server until that create has timed out,
   * or 'drop' the connection right after sending it.
   */
  const faultOnCreate = (target: string, fault: 'freeze' | 'drop'): { hit: () => boolean } => {
    const create = ZkSession.prototype.create;
    let hit = false;
    vi.spyOn(ZkSession.prototype, 'create').mockImplementation(function (
      this: ZkSession,
      path,
      data,
      mode,
    ) {
      if (path !== target || hit) return create.call(this, path, data, mode);
      hit = true;
      if (fault === 'freeze') zk.server.members[0].pause();
      const sent = create.call(this, path, data, mode);
      if (fault === 'freeze') {
        sent.then(
          () => zk.server.members[0].resume(),
          () => zk.server.members[0].resume(),
        );
      } else {
        process.nextTick(() => (this as any).wire.dropSocket());
      }
      return sent;
    });
    return { hit: () => hit };
  };

  it.each(['freeze', 'drop'] as const)(
    'acquires through a parent create in doubt (%s), and cleans the parent up',
    async (fault) => {
      const parent = `${zk.root}/${fault}/orders`;
      const path = `${parent}/42`;
      await zk.admin.create(`${zk.root}/${fault}/keep`, '', 'persistent');
      const locks = await zk.connect({ requestTimeoutMs: REQUEST_MS, parentCleanupDelayMs: 0 });
      const spy = faultOnCreate(parent, fault);

      const outcome = await locks.acquire(path, { waitTimeoutMs: 30_000 }).catch((e) => e);
      expect(spy.hit()).toBe(true);
      expect(outcome).not.toBeInstanceOf(Error);
      await outcome.release();
      await locks.close();
      // The parent the server created while the request was in doubt is gone too.
      expect(await zk.admin.exists(parent)).toBe(false);
      expect(await zk.admin.exists(`${zk.root}/${fault}/keep`)).toBe(true);
    },
  );

  it('fails acquire, tryAcquire, inspect and read locks only with documented errors while the server is frozen', async () => {
    const path = `${zk.root}/frozen/lock`;
    const locks = await zk.connect({ requestTimeoutMs: REQUEST_MS, connectTimeoutMs: 3_000 });
    zk.server.members[0].pause();
    let outcomes: unknown[];
    try {
      outcomes = await Promise.all([
        locks.acquire(path, { waitTimeoutMs: 3 * REQUEST_MS }).catch((e) => e),
        locks.tryAcquire(`${path}-try`).catch((e) => e), // until its session is lost: 9 s
        locks.inspect(path).catch((e) => e),
        locks
          .readLock(`${path}-read`)
          .tryAcquire()
          .catch((e) => e),
      ]);
    } finally {
      zk.server.members[0].resume();
    }
    for (const outcome of outcomes) expect(outcome).toBeInstanceOf(ZkLockError);
    const inspected = outcomes[2] as Error;
    expect(inspected).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(inspected.message).toContain(path);
    // Creates the frozen server received are applied now; they go with their session.
    await eventually(
      'the lost session is expired and its nodes removed',
      async () => (await zk.admin.children(path)).length === 0,
      4 * SESSION_MS,
    );
    await zk.expectFreeForOthers(path);
  });
});
