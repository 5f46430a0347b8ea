/**
 * Deadlines: a waiter that times out or is aborted removes its queue node; tryAcquire returns
 * null (and leaves nothing behind) while another process holds the lock; a short wait bounds
 * waiting, not the acquire's requests; `waitTimeoutMs: 0` tries once, an aborted signal wins
 * over it, and a wait no Node timer can hold is refused.
 */
import {
  InvalidLockOptionsError,
  LockAbortedError,
  type LockHandle,
  LockTimeoutError,
  ZkLockClient,
  ZkLockError,
  ZooKeeperUnavailableError,
} from '../../lib';
import type { LockAgent } from './support/agents';
import { useCoreFixture } from './support/core-fixture';
import { useOwnServer } from './support/own-server';
import { TcpProxy } from './support/tcp-proxy';
import { clientPortOf, eventually, settledFlag, zkConnectFromEnv } from './support/zk-admin';

describe('timeout, abort and tryAcquire while another process holds', () => {
  const zk = useCoreFixture('timeout');
  const path = `${zk.root}/busy`;
  let holder: LockAgent;

  beforeAll(async () => {
    holder = await zk.startAgent();
    await holder.acquire(path);
  });

  /** Only the other process's node is left under the lock path. */
  const expectOnlyHolderNode = async (): Promise<void> => {
    const inspection = await zk.locks.inspect(path);
    expect(inspection.holder?.data.pid).toBe(holder.pid);
    expect(inspection.queue).toEqual([]);
    expect(await zk.admin.children(path)).toHaveLength(1);
  };

  it('rejects with LockTimeoutError after waitTimeoutMs and removes its node', async () => {
    const timeouts: unknown[] = [];
    const onTimeout = (event: unknown): void => void timeouts.push(event);
    zk.locks.on('timeout', onTimeout);
    const error = await zk.locks.acquire(path, { waitTimeoutMs: 500 }).catch((e: unknown) => e);
    zk.locks.off('timeout', onTimeout);

    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toBeInstanceOf(ZkLockError);
    const timeout = error as LockTimeoutError;
    expect(timeout.path).toBe(path);
    expect(timeout.waitTimeoutMs).toBe(500);
    expect(timeout.holdersAhead).toBe(1);
    expect(timeout.message).toContain(path);
    expect(timeouts).toHaveLength(1);
    expect(timeouts[0]).toMatchObject({ path, waitTimeoutMs: 500 });
    await expectOnlyHolderNode();
  });

  it('rejects with LockAbortedError when the signal fires while queued, and removes its node', async () => {
    const controller = new AbortController();
    const waiting = zk.locks.acquire(path, { signal: controller.signal }).catch((e: unknown) => e);
    await eventually(
      'our waiter is queued',
      async () => (await zk.locks.inspect(path)).queue.length === 1,
    );
    const reason = new Error('user went away');
    controller.abort(reason);

    const error = await waiting;
    expect(error).toBeInstanceOf(LockAbortedError);
    expect((error as LockAbortedError).path).toBe(path);
    expect((error as LockAbortedError).cause).toBe(reason);
    await expectOnlyHolderNode();
  });

  it('rejects an already-aborted signal without creating a node', async () => {
    const error = await zk.locks
      .acquire(path, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockAbortedError);
    await expectOnlyHolderNode();
  });

  it('tryAcquire returns null while another process holds and leaves no node', async () => {
    expect(await zk.locks.tryAcquire(path)).toBeNull();
    expect(zk.locks.isHeld(path)).toBe(false);
    await expectOnlyHolderNode();
  });

  it('tryAcquire succeeds once the other process has released', async () => {
    await holder.release(path);
    const lock = await zk.locks.tryAcquire(path);
    expect(lock).not.toBeNull();
    expect(lock?.state).toBe('held');
    await lock?.release();
    expect(await zk.admin.children(path)).toEqual([]);
  });
});

/**
 * The deadline bounds waiting, not the requests of an acquire (docs/design.md
 * "Deadlines", as Curator's InterProcessMutex.acquire(time, unit)). A wait that ends while its
 * node is created and listed on a connected session is answered by that listing; it ended at
 * once, so a free lock with `waitTimeoutMs: 1` failed with LockTimeoutError where
 * `waitTimeoutMs: 0` (one try) was granted. One client goes through a TCP proxy that can hold its
 * requests until the deadline has passed.
 */
describe('a short waitTimeoutMs bounds the wait, not the requests of the acquire', () => {
  const zk = useCoreFixture('short-deadline');
  const CREATE = 1;
  let proxy: TcpProxy;
  let client: ZkLockClient;

  beforeEach(async () => {
    proxy = await TcpProxy.start(clientPortOf(zkConnectFromEnv()));
    client = await ZkLockClient.connect({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: 20_000,
      sessions: 1, // its requests are the ones held below
    });
  });

  afterEach(async () => {
    proxy.unblock();
    proxy.releaseRequests();
    await client.close();
    await proxy.close();
  });

  /** A lock node that exists and is free. */
  const freeLock = async (name: string): Promise<string> => {
    const path = `${zk.root}/${name}`;
    await zk.admin.create(path, '', 'persistent');
    return path;
  };

  /**
   * An acquire of `path` with `waitTimeoutMs`, its create and listing held by the proxy until
   * the deadline has passed with the acquire still unanswered; then they go on.
   */
  const acquireWithRequestsPastDeadline = async (
    path: string,
    waitTimeoutMs: number,
  ): Promise<unknown> => {
    proxy.holdRequests();
    const startedAt = Date.now();
    const acquiring = client.acquire(path, { waitTimeoutMs }).catch((e: unknown) => e);
    const settled = settledFlag(acquiring);
    await eventually('the create is held', () => proxy.heldOps.includes(CREATE));
    await eventually('the deadline has passed', () => Date.now() - startedAt > 2 * waitTimeoutMs);
    expect(settled()).toBe(false); // not answered while its requests are under way
    proxy.releaseRequests();
    return acquiring;
  };

  it('grants a free lock with waitTimeoutMs 1, 50 times of 50', async () => {
    const path = await freeLock('free-direct');
    for (let i = 0; i < 50; i++) {
      const lock = await zk.locks.acquire(path, { waitTimeoutMs: 1 });
      await lock.release();
    }
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('grants free read, write, multi-path locks and semaphores with waitTimeoutMs 1, 20 times each', async () => {
    const [rw, a, b, sem] = await Promise.all(['rw', 'a', 'b', 'sem'].map(freeLock));
    const options = { waitTimeoutMs: 1 };
    const takes: Array<() => Promise<{ release(): Promise<void> }>> = [
      () => zk.locks.readLock(rw).acquire(options),
      () => zk.locks.writeLock(rw).acquire(options),
      () => zk.locks.acquireAll([a, b], options),
      () => zk.locks.semaphore(sem, { maxLeases: 1 }).acquire(options),
    ];
    for (const take of takes) {
      for (let i = 0; i < 20; i++) await (await take()).release();
    }
    for (const path of [rw, a, b, `${sem}/leases`]) {
      expect(await zk.admin.children(path)).toEqual([]);
    }
  });

  it('grants a free lock whose create is answered after the deadline', async () => {
    const path = await freeLock('free-held');
    const lock = await acquireWithRequestsPastDeadline(path, 20);
    expect(lock).not.toBeInstanceOf(Error);
    expect((lock as LockHandle).state).toBe('held');
    await (lock as LockHandle).release();
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('of two callers sharing one node past the deadline, grants the first and times out the second', async () => {
    const path = await freeLock('batch-held');
    proxy.holdRequests();
    const startedAt = Date.now();
    // One tick: one node for both (docs/design.md "Ownership and batching inside one process").
    const [first, second] = [20, 20].map((waitTimeoutMs) =>
      client.acquire(path, { waitTimeoutMs }).catch((e: unknown) => e),
    );
    await eventually('the create is held', () => proxy.heldOps.includes(CREATE));
    await eventually('the deadline has passed', () => Date.now() - startedAt > 40);
    proxy.releaseRequests();
    const lock = (await first) as LockHandle;
    expect(lock.state).toBe('held');
    // The second is not first (the first holds its node) and its time is spent.
    expect(await second).toBeInstanceOf(LockTimeoutError);
    expect(await second).toMatchObject({ waitTimeoutMs: 20, ahead: 1 });
    await lock.release();
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('times out on a busy lock whose create is answered after the deadline, leaving no node', async () => {
    const path = await freeLock('busy-held');
    const held = await zk.locks.acquire(path); // another client (session) holds it
    const error = await acquireWithRequestsPastDeadline(path, 20);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ path, waitTimeoutMs: 20, ahead: 1 });
    await eventually('only the holder node is left', async () => {
      return (await zk.admin.children(path)).length === 1;
    });
    await held.release();
  });

  it('times out on a busy lock with waitTimeoutMs 1, leaving no node', async () => {
    const path = await freeLock('busy-direct');
    const held = await client.acquire(path); // another client (session) holds it
    for (let i = 0; i < 10; i++) {
      const error = await zk.locks.acquire(path, { waitTimeoutMs: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
    }
    await eventually('only the holder node is left', async () => {
      return (await zk.admin.children(path)).length === 1;
    });
    await held.release();
  });

  /** A client whose requests time out after 500 ms: held requests fail in doubt, connected. */
  const connectAnsweredLate = (): Promise<ZkLockClient> =>
    ZkLockClient.connect({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: 20_000,
      requestTimeoutMs: 500,
      sessions: 1,
    });

  it('times out once its create goes unanswered (requestTimeoutMs), the session still connected', async () => {
    // A server that answers late: finding a create in doubt is a wait, which the deadline ends.
    const slow = await connectAnsweredLate();
    try {
      const path = await freeLock('create-in-doubt');
      proxy.holdRequests();
      const error = await slow.acquire(path, { waitTimeoutMs: 20 }).catch((e: unknown) => e);
      // Not bounded by the deadline, it would wait for the connection to be dropped (2/3 of the
      // session timeout).
      expect(slow.state).toBe('CONNECTED');
      expect(error).toBeInstanceOf(LockTimeoutError);
      proxy.releaseRequests();
      await eventually('its node, found by recovery, deleted', async () => {
        return (await zk.admin.children(path)).length === 0;
      });
    } finally {
      proxy.releaseRequests();
      await slow.close();
    }
  });

  it('times out once the create of its missing lock path goes unanswered, the session still connected', async () => {
    const slow = await connectAnsweredLate();
    try {
      // The lock node's create passes (NO_NODE: no lock path yet), the path's creates are held.
      proxy.afterRequest = (op) => {
        if (op !== CREATE) return;
        proxy.afterRequest = undefined;
        proxy.holdRequests();
      };
      const path = `${zk.root}/missing-parent/lock`;
      const error = await slow.acquire(path, { waitTimeoutMs: 20 }).catch((e: unknown) => e);
      expect(slow.state).toBe('CONNECTED');
      expect(error).toBeInstanceOf(LockTimeoutError);
    } finally {
      proxy.afterRequest = undefined;
      proxy.releaseRequests();
      await slow.close();
    }
  });

  it('ends with ZooKeeperUnavailableError when the connection drops after the deadline, during the create', async () => {
    const path = await freeLock('dropped');
    proxy.holdRequests();
    const startedAt = Date.now();
    const acquiring = client.acquire(path, { waitTimeoutMs: 20 }).catch((e: unknown) => e);
    const settled = settledFlag(acquiring);
    await eventually('the create is held', () => proxy.heldOps.includes(CREATE));
    await eventually('the deadline has passed', () => Date.now() - startedAt > 40);
    expect(settled()).toBe(false);
    proxy.block();
    const error = await acquiring;
    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(error).toMatchObject({ timeoutMs: 20 });
    expect(client.state).not.toBe('CONNECTED'); // answered by the drop, not after a reconnect
  });

  it('ends with ZooKeeperUnavailableError at its deadline while the connection is blocked', async () => {
    const path = await freeLock('blocked');
    proxy.block();
    await eventually('the client saw the disconnect', () => client.state !== 'CONNECTED');
    const startedAt = Date.now();
    const error = await client.acquire(path, { waitTimeoutMs: 200 }).catch((e: unknown) => e);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(195);
    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(error).toMatchObject({ timeoutMs: 200 });
    expect(client.state).not.toBe('CONNECTED');
  });
});

describe('waitTimeoutMs at its edges: 0 tries once, an aborted signal wins, too long is refused', () => {
  const zk = useOwnServer('wait-edges', { sessionTimeoutMs: 3000 });

  it('waitTimeoutMs: 0 takes a free lock, and fails at once with LockTimeoutError on a held one', async () => {
    const locks = await zk.connect();
    const path = `${zk.root}/zero`;
    const lock = await locks.acquire(path, { waitTimeoutMs: 0 });
    expect(lock.state).toBe('held');
    const other = await zk.connect();
    await expect(other.acquire(path, { waitTimeoutMs: 0 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );
    await expect(
      other.readLock(`${zk.root}/zero-rw`).acquire({ waitTimeoutMs: 0 }),
    ).resolves.toMatchObject({ state: 'held' });
    await lock.release();
    const again = await other.acquire(path, { waitTimeoutMs: 0 });
    await again.release();
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('waitTimeoutMs: 0 with a signal already aborted takes nothing: LockAbortedError', async () => {
    // A multi-path lock or a semaphore asks for its next step with the time left, 0 once the
    // deadline has passed: an abort that landed meanwhile must still win over the try-once.
    const locks = await zk.connect();
    const path = `${zk.root}/zero-aborted`;
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      locks.acquire(path, { waitTimeoutMs: 0, signal: controller.signal }),
    ).rejects.toBeInstanceOf(LockAbortedError);
    await expect(
      locks.acquireAll([`${path}-a`, `${path}-b`], { waitTimeoutMs: 0, signal: controller.signal }),
    ).rejects.toBeInstanceOf(LockAbortedError);
    for (const taken of [path, `${path}-a`, `${path}-b`]) {
      expect(await zk.admin.children(taken)).toEqual([]);
    }
  });

  it('a wait longer than 2^31-1 ms (or negative, or NaN) is refused before any request', async () => {
    const locks = await zk.connect();
    const other = await zk.connect();
    const path = `${zk.root}/long`;
    const held = await other.acquire(path);
    for (const waitTimeoutMs of [2 ** 31, -1, Number.NaN]) {
      const error = await locks.acquire(path, { waitTimeoutMs }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockOptionsError);
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toMatch(/waitTimeoutMs must be from 0 to 2147483647 ms/);
    }
    await expect(
      locks.semaphore(`${zk.root}/long-sem`, { maxLeases: 1 }).acquire({ waitTimeoutMs: 2 ** 32 }),
    ).rejects.toBeInstanceOf(InvalidLockOptionsError);
    expect(await zk.admin.children(path)).toHaveLength(1); // only the holder's node
    await held.release();
  });
});
