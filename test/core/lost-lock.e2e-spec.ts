/**
 * How a holder learns its lock is lost. One whose node someone else deletes learns it
 * (LockLostError 'node-deleted') as soon as anyone asks: `lock.watchForLoss()`, a `lost`
 * listener on the handle or on the client; until then no watch is set, so an uncontended
 * acquire + release stays at three requests, and reading `lock.signal` sends nothing. A `lost`
 * listener added after the loss is still told, once. (Losses by session: zookeeper-restart,
 * session-pause, one-way-loss.)
 */
import { type LockHandle, LockLostError, type SemaphoreLease, ZkLockClient } from '../../lib';
import { OP } from '../../lib/core/zookeeper/jute';
import { scaled } from '../support/time-scale';
import { watchesUnder } from '../support/zookeeper';
import { useCoreFixture } from './support/core-fixture';
import { expireSession } from './support/expire-session';
import { useOwnServer } from './support/own-server';
import { TcpProxy } from './support/tcp-proxy';
import { clientPortOf, eventually, zkConnectFromEnv } from './support/zk-admin';

describe('a lock node deleted by another client', () => {
  const zk = useCoreFixture('node-deleted');
  /** Watches on this file's root (the run's server is shared: other files' watches not counted). */
  const watchCount = (): Promise<number> => watchesUnder(clientPortOf(zkConnectFromEnv()), zk.root);

  const holderNode = async (path: string): Promise<string> => {
    const children = await zk.admin.children(path);
    expect(children).toHaveLength(1);
    return `${path}/${children[0]}`;
  };

  it('sets no watch for a holder nobody observes, and one once watchForLoss() is called', async () => {
    const path = `${zk.root}/unobserved`;
    const before = await watchCount();
    const lock = await zk.locks.acquire(path);
    expect(await watchCount()).toBe(before);
    const signal = lock.watchForLoss();
    expect(signal).toBe(lock.signal);
    await eventually(
      'the holder watches its node',
      async () => (await watchCount()) === before + 1,
    );
    expect(signal.aborted).toBe(false);
    await lock.release();
    await eventually('the watch is gone', async () => (await watchCount()) === before);
  });

  it('reading the signal sends no request', async ({ onTestFinished }) => {
    const proxy = await TcpProxy.start(clientPortOf(zkConnectFromEnv()));
    onTestFinished(() => proxy.close());
    const locks = await ZkLockClient.connect({
      connectionString: proxy.connectionString,
      sessions: 1,
    });
    onTestFinished(() => locks.close());
    const path = `${zk.root}/signal-read`;
    const lock = await locks.acquire(path);
    const sent: number[] = [];
    proxy.afterRequest = (op) => {
      if (op !== OP.PING) sent.push(op);
    };
    // A request sent after anything the reads sent: its answer comes after theirs.
    const marker = (): Promise<unknown> => locks.inspect(`${zk.root}/nothing-here`);
    expect(lock.signal.aborted).toBe(false);
    await marker();
    expect(sent.filter((op) => op === OP.GET_DATA)).toEqual([]);
    await locks.withLock(`${path}-scoped`, async () => {
      sent.length = 0;
      expect(locks.heldLock(`${path}-scoped`)!.signal.aborted).toBe(false);
      await marker();
      expect(sent.filter((op) => op === OP.GET_DATA)).toEqual([]);
    });
    await lock.release();
  });

  it('aborts the signal with LockLostError when the node is deleted', async () => {
    const path = `${zk.root}/signal`;
    const before = await watchCount();
    const lock = await zk.locks.acquire(path);
    const signal = lock.watchForLoss();
    const aborted = new Promise<unknown>((resolve) =>
      signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
    );
    await eventually(
      'the holder watches its node',
      async () => (await watchCount()) === before + 1,
    );
    await zk.admin.removeTree(await holderNode(path));
    const reason = await aborted;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('node-deleted');
    expect(lock.state).toBe('lost');
    await lock.release();
  });

  it('tells a lost listener on the handle, and the client has a lost listener watch every holder', async () => {
    const onHandle = `${zk.root}/handle-listener`;
    const first = await watchCount();
    const lock = await zk.locks.acquire(onHandle);
    const lost = new Promise<LockLostError>((resolve) => lock.on('lost', resolve));
    await eventually('the holder watches its node', async () => (await watchCount()) === first + 1);
    await zk.admin.removeTree(await holderNode(onHandle));
    expect((await lost).reason).toBe('node-deleted');
    await lock.release();

    const onClient = `${zk.root}/client-listener`;
    const events: string[] = [];
    const listener = ({ path }: { path: string }): number => events.push(path);
    zk.locks.on('lost', listener);
    try {
      const before = await watchCount();
      const second = await zk.locks.acquire(onClient);
      await eventually(
        'the holder watches its node',
        async () => (await watchCount()) === before + 1,
      );
      await zk.admin.removeTree(await holderNode(onClient));
      await eventually('the client reports the loss', () => events.includes(onClient));
      expect(second.state).toBe('lost');
      await second.release();
    } finally {
      zk.locks.off('lost', listener);
    }
  });

  /**
   * What `hold` holds is told of its node's deletion by a 'lost' listener added after its first
   * watch went unanswered. A client of its own, through a proxy, with no 'lost' listener of the
   * client's. The proxy holds the watch, and what follows on the connection, until it timed out
   * on the client: the connection stays up (pings are held for much less than the session
   * timeout), so nothing re-arms it on a reconnect.
   */
  const toldAfterUnansweredWatch = async (
    name: string,
    hold: (locks: ZkLockClient, path: string) => Promise<LockHandle | SemaphoreLease>,
    nodesUnder: (path: string) => string,
    onTestFinished: (fn: () => Promise<void>) => void,
  ): Promise<void> => {
    const proxy = await TcpProxy.start(clientPortOf(zkConnectFromEnv()));
    onTestFinished(async () => proxy.close());
    const locks = await ZkLockClient.connect({
      connectionString: proxy.connectionString,
      sessions: 1,
      sessionTimeoutMs: scaled(20_000),
      requestTimeoutMs: scaled(500),
    });
    onTestFinished(() => locks.close());
    const path = `${zk.root}/${name}`;
    const held = await hold(locks, path);
    const watchHeld = proxy.holdAtRequest(OP.GET_DATA);
    expect(held.watchForLoss().aborted).toBe(false);
    await watchHeld;
    // A request sent after the watch times out after it.
    await expect(locks.inspect(path)).rejects.toThrow(/no answer/);
    proxy.releaseRequests();
    let told: LockLostError | undefined;
    held.on('lost', (error: LockLostError) => (told = error));
    await zk.admin.removeTree(await holderNode(nodesUnder(path)));
    await eventually('the holder is told its node is gone', () => told !== undefined);
    expect(told!.reason).toBe('node-deleted');
    await held.release();
  };

  it("asks again for a watch that went unanswered when a 'lost' listener comes", ({
    onTestFinished,
  }) =>
    toldAfterUnansweredWatch(
      'unanswered-watch',
      (locks, path) => locks.acquire(path),
      (path) => path,
      onTestFinished,
    ));

  it("a semaphore lease asks again for a watch that went unanswered when a 'lost' listener comes", ({
    onTestFinished,
  }) =>
    toldAfterUnansweredWatch(
      'unanswered-lease-watch',
      (locks, path) => locks.semaphore(path, { maxLeases: 1 }).acquire(),
      (path) => `${path}/leases`,
      onTestFinished,
    ));

  it("a watched semaphore lease is still told of its node's deletion after a change of its data", async () => {
    const path = `${zk.root}/lease-data-changed`;
    const lease = await zk.locks.semaphore(path, { maxLeases: 1 }).acquire();
    const before = await watchCount();
    const signal = lease.watchForLoss();
    await eventually('the lease node is watched', async () => (await watchCount()) === before + 1);
    const node = await holderNode(`${path}/leases`);
    await zk.admin.setData(node, 'changed by an operator');
    // The change fired the watch; the lease watches its node again.
    await eventually(
      'the lease node is watched again',
      async () => (await watchCount()) === before + 1,
    );
    await zk.admin.removeTree(node);
    await eventually('the holder is told its lease node is gone', () => signal.aborted);
    expect(signal.reason).toMatchObject({ reason: 'node-deleted' });
    await lease.release();
  });

  it('ends a batch on a deleted node before its next handoff, even if nobody observes the holders', async () => {
    const path = `${zk.root}/batch`;
    const [first, second, third] = ['a', 'b', 'c'].map(() => zk.locks.acquire(path));
    const one = await first;
    const node = await holderNode(path);
    await zk.admin.removeTree(node);
    // A node that will serve more callers watches itself from its first holder on, so the
    // deletion is noticed before the handoff: the node serves no one else (a remote that took
    // the lock meanwhile would hold it with our next caller), and the rest of the batch queues
    // again, on a node of its own.
    await eventually('the first holder learns its node is gone', () => one.state === 'lost');
    await one.release();
    const two = await second;
    expect(two.state).toBe('held');
    const newNode = await holderNode(path);
    expect(newNode).not.toBe(node);
    expect(two.fencingToken).toBeGreaterThan(one.fencingToken + 1n); // not the next generation
    await two.release();
    const three = await third; // handed on in process, on the new node
    expect(await holderNode(path)).toBe(newNode);
    expect(three.state).toBe('held');
    expect(three.fencingToken).toBe(two.fencingToken + 1n);
    await three.release();
  });
});

describe("a holder's 'lost' listener after a session expiry", () => {
  const zk = useOwnServer('lost-listener', { sessionTimeoutMs: 3000 });

  it("a handle's 'lost' listener added after the loss is called once, later, with the same error", async () => {
    const locks = await zk.connect({ sessions: 1 });
    const lock = await locks.acquire(`${zk.root}/late-listener`);
    await expireSession(zk.server.connectionString, locks, 0);
    await eventually('the lock is lost', () => lock.state === 'lost');
    const told: unknown[] = [];
    lock.on('lost', (error) => told.push(error));
    expect(told).toEqual([]); // not from inside on(): after the caller's code has run
    const removed = vi.fn();
    lock.on('lost', removed).off('lost', removed);
    const notTerminal = vi.fn();
    lock.on('uncertain', notTerminal).on('reconnected', notTerminal);
    await eventually("the late 'lost' listener is called", () => told.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 50)); // room for a second call
    expect(told).toHaveLength(1);
    expect(told[0]).toBe(lock.signal.reason);
    expect(told[0]).toMatchObject({ name: 'LockLostError', reason: 'session-expired' });
    expect(removed).not.toHaveBeenCalled();
    expect(notTerminal).not.toHaveBeenCalled();
    await lock.release();
    expect(await zk.admin.children(`${zk.root}/late-listener`)).toEqual([]);
  });
});
