/**
 * The callers one client keeps waiting are capped per lock path (`maxWaitersPerPath`, the read
 * and write sides of a path together) and in all (`maxWaiters`): a caller beyond is refused at
 * once with LockQueueFullError naming the path, the option and its limit, instead of one more
 * promise, timer and queue entry for as long as the lock stays busy. A try does not wait and is
 * never refused. Room comes back as waits end (granted, aborted, timed out), and nothing is left
 * waiting after. The busy locks are held by another client (its own ZooKeeper session).
 */
import {
  LockHandle,
  LockQueueFullError,
  LockTimeoutError,
  SemaphoreLease,
  ZkLockClient,
} from '../../lib';
import { useCoreFixture } from './support/core-fixture';
import { snapshotResources } from './support/resources';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

const PER_PATH = 3;
const IN_ALL = 5;
/** Only so that a caller wrongly queued fails the test instead of hanging it. */
const BOUND_MS = 30_000;

describe('caps on waiting callers', () => {
  const zk = useCoreFixture('queue-limits', { maxWaitersPerPath: PER_PATH, maxWaiters: IN_ALL });
  let other: ZkLockClient;

  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
  });

  afterAll(async () => {
    await other?.close();
  });

  /** A waiting caller that releases as soon as it is served; resolves to 'served' or the error. */
  const wait = (take: () => Promise<LockHandle | SemaphoreLease>): Promise<string | Error> =>
    take().then(
      async (lock) => {
        await lock.release();
        return 'served';
      },
      (err: Error) => err,
    );

  /** The refusal of one more caller, which must come while the others still wait. */
  const refusal = async (take: () => Promise<unknown>): Promise<LockQueueFullError> => {
    const error = await take().then(
      () => new Error('it was served'),
      (err: Error) => err,
    );
    expect(error.name).toBe('LockQueueFullError');
    expect(error).toBeInstanceOf(LockQueueFullError);
    return error as LockQueueFullError;
  };

  const nothingLeft = async (paths: string[]): Promise<void> => {
    for (const path of paths) {
      await eventually(`no node left on ${path}`, async () => {
        const { holders, queue } = await zk.locks.inspect(path);
        return holders.length === 0 && queue.length === 0;
      });
    }
  };

  it('refuses the caller beyond maxWaitersPerPath on one path, and takes callers again once they are served', async () => {
    const path = `${zk.root}/one`;
    const timers = snapshotResources({}).active.Timeout;
    const held = await other.acquire(path);
    const waiting = Array.from({ length: PER_PATH }, () =>
      wait(() => zk.locks.acquire(path, { waitTimeoutMs: BOUND_MS })),
    );
    const error = await refusal(() => zk.locks.acquire(path, { waitTimeoutMs: BOUND_MS }));
    expect(error).toMatchObject({ path, option: 'maxWaitersPerPath', limit: PER_PATH });
    expect(error.message).toContain(`"${path}"`);
    expect(error.message).toContain(`maxWaitersPerPath: ${PER_PATH}`);
    // A try does not wait: it is answered as usual.
    expect(await zk.locks.tryAcquire(path)).toBeNull();
    await expect(zk.locks.acquire(path, { waitTimeoutMs: 0 })).rejects.toThrow(LockTimeoutError);
    // Another path of the same client has room.
    expect(await wait(() => zk.locks.acquire(`${zk.root}/free`))).toBe('served');

    await held.release();
    expect(await Promise.all(waiting)).toEqual(Array(PER_PATH).fill('served'));
    expect(await wait(() => zk.locks.acquire(path, { waitTimeoutMs: BOUND_MS }))).toBe('served');
    await nothingLeft([path, `${zk.root}/free`]);
    await eventually('no timer of a wait is left', () => {
      return snapshotResources({}).active.Timeout <= timers;
    });
  });

  it('counts the read and write sides of a path together', async () => {
    const path = `${zk.root}/rw`;
    const held = await other.writeLock(path).acquire();
    const waiting = [
      wait(() => zk.locks.readLock(path).acquire()),
      wait(() => zk.locks.writeLock(path).acquire()),
      wait(() => zk.locks.readLock(path).acquire()),
    ];
    const error = await refusal(() =>
      zk.locks.writeLock(path).acquire({ waitTimeoutMs: BOUND_MS }),
    );
    expect(error).toMatchObject({ path, option: 'maxWaitersPerPath' });
    await held.release();
    expect(await Promise.all(waiting)).toEqual(['served', 'served', 'served']);
    await nothingLeft([path]);
  });

  it('refuses the caller beyond maxWaiters across paths, and has room again once one gives up', async () => {
    const paths = [1, 2, 3].map((i) => `${zk.root}/many-${i}`);
    const held = await Promise.all(paths.map((path) => other.acquire(path)));
    const aborts = new AbortController();
    const waiting = [
      wait(() => zk.locks.acquire(paths[0], { signal: aborts.signal })),
      wait(() => zk.locks.acquire(paths[0])),
      wait(() => zk.locks.acquire(paths[1])),
      wait(() => zk.locks.acquire(paths[1])),
      wait(() => zk.locks.acquire(paths[2])),
    ];
    const error = await refusal(() => zk.locks.acquire(paths[2], { waitTimeoutMs: BOUND_MS }));
    expect(error).toMatchObject({ path: paths[2], option: 'maxWaiters', limit: IN_ALL });
    expect(error.message).toContain(`maxWaiters: ${IN_ALL}`);

    aborts.abort(new Error('the client went away'));
    waiting.push(wait(() => zk.locks.acquire(paths[2], { waitTimeoutMs: BOUND_MS })));
    await Promise.all(held.map((lock) => lock.release()));
    const outcomes = await Promise.all(waiting);
    expect(outcomes.slice(1)).toEqual(Array(IN_ALL).fill('served'));
    expect(outcomes[0]).toMatchObject({ name: 'LockAbortedError' });
    await nothingLeft(paths);
  });

  it("a semaphore's refusal names the semaphore", async () => {
    const path = `${zk.root}/pool`;
    const held = await other.semaphore(path, { maxLeases: 1 }).acquire();
    const semaphore = zk.locks.semaphore(path, { maxLeases: 1 });
    // The first waits for a lease holding the semaphore's mutex; the next ones wait for that.
    const waiting = [wait(() => semaphore.acquire())];
    await eventually('the first holds the mutex', async () => {
      return (await zk.locks.inspect(`${path}/locks`)).holders.length === 1;
    });
    for (let i = 0; i < PER_PATH; i++) waiting.push(wait(() => semaphore.acquire()));
    const error = await refusal(() => semaphore.acquire({ waitTimeoutMs: BOUND_MS }));
    expect(error).toMatchObject({ path, option: 'maxWaitersPerPath' });
    await held.release();
    expect(await Promise.all(waiting)).toEqual(Array(PER_PATH + 1).fill('served'));
    await nothingLeft([`${path}/locks`]);
    await eventually('no lease node left', async () => {
      const { holders, waiting: queued } = await semaphore.inspect();
      return holders.length === 0 && queued.length === 0;
    });
  });
});
