/**
 * Requests in doubt (no answer in time, or the connection dropped) while a lock is taken or its
 * path cleaned up: the waiter retries within its wait and never fails with a raw ZooKeeper
 * error (no raw ZkRequestError reaches a caller of acquire or inspect on any path), and nothing
 * the server applied meanwhile is left behind: a parent created during an uncertain request, a
 * contender node whose create was in doubt, an idle lock path whose cleanup met an outage.
 * Runs its own server, frozen (SIGSTOP) at the exact moment a request is sent (a spy on the
 * session's create only observes; the server really is frozen).
 */
import { ConnectionState, ZkLockError, ZooKeeperUnavailableError } from '../../lib';
import { ZkSession } from '../../lib/core/zookeeper/zk-session';
import { useOwnServer } from './support/own-server';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';
import { vi } from 'vitest';

const SESSION_MS = 9_000; // the clock notices a frozen server after 6 s: the freeze is shorter
const REQUEST_MS = 500;
/** The clock notices a frozen server after 2/3 of it (6 s): room for short freezes. */
const OUTAGE_SESSION_MS = 9_000;

describe('requests in doubt', () => {
  const zk = useOwnServer('requests-in-doubt', { sessionTimeoutMs: SESSION_MS });
  const { root, connect } = zk;
  const freezeServerUntil = zk.freezeServerUntil;
  afterEach(() => vi.restoreAllMocks());

  /**
   * When the create that makes `target` (a lock path's parent, with the lock node) is sent:
   * 'freeze' the server until that create has timed out, or 'drop' the connection right after
   * sending it.
   */
  const faultOnCreate = (target: string, fault: 'freeze' | 'drop'): { hit: () => boolean } => {
    const create = ZkSession.prototype.createWithParents;
    let hit = false;
    vi.spyOn(ZkSession.prototype, 'createWithParents').mockImplementation(function (
      this: ZkSession,
      parents,
      ...node
    ) {
      if (!parents.some((p) => p.path === target) || hit)
        return create.call(this, parents, ...node);
      hit = true;
      if (fault === 'freeze') zk.server.members[0].pause();
      const sent = create.call(this, parents, ...node);
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
      scaled(4 * SESSION_MS),
    );
    await zk.expectFreeForOthers(path);
  });

  it('leaves no orphan node when the create is in doubt and finding it again times out too', async () => {
    const path = `${root}/create-in-doubt`;
    // Requests time out long before the clock notices the frozen server (6 s).
    const locks = await connect({ sessionTimeoutMs: OUTAGE_SESSION_MS, requestTimeoutMs: 300 });
    await zk.admin.removeTree(path);
    const warm = await locks.acquire(path); // the lock path exists: one create, no mkdirp
    await warm.release();

    zk.server.members[0].pause();
    let outcome: unknown;
    try {
      outcome = await locks.acquire(path, { waitTimeoutMs: 1_500 }).then(
        (lock) => lock,
        (err: unknown) => err,
      );
    } finally {
      zk.server.members[0].resume();
    }
    // The waiter gives up with one of ours, not with a raw ZooKeeper request error.
    expect(outcome).toBeInstanceOf(ZkLockError);
    // The server now applies the create it had received: that node must not stay behind, or it
    // would hold the lock for as long as our session lives.
    await zk.expectFreeForOthers(path);
  });

  it('removes an idle lock path once ZooKeeper is back when the cleanup ran into an outage', async () => {
    const path = `${root}/cleanup-outage/lock`;
    const locks = await connect({
      sessionTimeoutMs: OUTAGE_SESSION_MS,
      requestTimeoutMs: 300,
      parentCleanupDelayMs: 1_000,
    });
    const states: ConnectionState[] = [];
    locks.on('state', (state: ConnectionState) => states.push(state));
    const lock = await locks.acquire(path);
    await lock.release();
    expect(await zk.admin.exists(path)).toBe(true);

    // The cleanup is due 1 to 2 s after the release: the server is frozen by then, and stays
    // frozen until the client notices (6 s), so the removal fails or is skipped.
    await freezeServerUntil('the session is suspended', () => states.includes('SUSPENDED'));
    await eventually('the same session is back', () => states.includes('RECONNECTED'));
    await eventually('the lock path and the parent we created are gone', async () => {
      return !(await zk.admin.exists(`${root}/cleanup-outage`));
    });
  });
});
