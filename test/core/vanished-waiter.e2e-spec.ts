/**
 * A waiter whose own node someone deleted (an operator, a `deleteall` while
 * callers wait) is never granted the lock on it. Without a check, "the only node ahead of ours
 * is gone, so we are first" grants it while the next node in line is granted too: two holders.
 * The caller whose node vanished queues again, behind whoever queued meanwhile (docs/design.md
 * "What holding means, and when it ends": own node watched while waiting). Each client here
 * has its own session, as separate processes would.
 */
import { LockHandle, ZkLockClient } from '../../lib';
import { useTestRoot } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

const SESSION_MS = 10_000;

/** Settles-or-not view of a pending acquire (the test must see whether it was granted). */
function track(acquire: Promise<LockHandle>): { lock?: LockHandle; error?: unknown } {
  const state: { lock?: LockHandle; error?: unknown } = {};
  acquire.then(
    (lock) => (state.lock = lock),
    (error: unknown) => (state.error = error),
  );
  return state;
}

describe('a waiter whose own node was deleted', () => {
  const zk = useTestRoot('vanished-waiter');
  const clients: ZkLockClient[] = [];
  const connect = async (): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessionTimeoutMs: SESSION_MS,
    });
    clients.push(client);
    return client;
  };

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  /** Children in queue order (by the sequence ZooKeeper appended). */
  const queue = async (path: string): Promise<string[]> =>
    (await zk.admin.children(path)).sort((a, b) => Number(a.slice(-10)) - Number(b.slice(-10)));
  const queued = (path: string, n: number): Promise<void> =>
    eventually(`${n} nodes queued under ${path}`, async () => (await queue(path)).length === n);

  /**
   * Deletes the `index`th node in line, lets `first` go, and waits until C (`next`) holds and
   * our caller(s) either queued again (two nodes left: C's and a new one) or were granted.
   */
  const deleteThenRelease = async (
    path: string,
    index: number,
    first: LockHandle,
    next: { lock?: LockHandle },
    granted: () => boolean,
  ): Promise<string> => {
    const gone = (await queue(path))[index];
    await zk.admin.remove(`${path}/${gone}`);
    await first.release();
    await eventually('C holds', () => next.lock !== undefined);
    await eventually(
      'ours queued again, or were granted',
      async () => granted() || (await queue(path)).length === 2,
    );
    return gone;
  };

  it('is not granted when the node ahead goes: it queues again behind the next waiter', async () => {
    const path = `${zk.root}/remote`;
    const [a, b, c] = [await connect(), await connect(), await connect()];
    const first = await a.acquire(path);
    await queued(path, 1);
    const second = track(b.acquire(path));
    await queued(path, 2);
    const third = track(c.acquire(path));
    await queued(path, 3);
    // B queues again on a new node, behind C: never granted on the node that is gone.
    const bNode = await deleteThenRelease(path, 1, first, third, () => !!second.lock);
    expect({ granted: second.lock !== undefined }).toEqual({ granted: false });
    const bAgain = (await queue(path))[1];
    expect(bAgain).not.toBe(bNode);
    expect(third.lock!.state).toBe('held');
    expect(() => third.lock!.assertHeld()).not.toThrow();

    await third.lock!.release();
    await eventually('B holds after C', () => second.lock !== undefined);
    expect(await queue(path)).toEqual([bAgain]);
    expect(second.lock!.fencingToken).toBeGreaterThan(third.lock!.fencingToken);
    await second.lock!.release();
  });

  it('grants no caller of a batch on its deleted node: the batch queues again', async () => {
    const path = `${zk.root}/batch`;
    const [a, p, c] = [await connect(), await connect(), await connect()];
    const first = await a.acquire(path);
    await queued(path, 1);
    const batch = [track(p.acquire(path)), track(p.acquire(path))]; // one tick: one node
    await queued(path, 2);
    const third = track(c.acquire(path));
    await queued(path, 3);
    await deleteThenRelease(path, 1, first, third, () => batch.some((w) => w.lock));
    expect(batch.map((w) => w.lock !== undefined)).toEqual([false, false]);

    await third.lock!.release();
    await eventually('the batch holds after C', () => batch[0].lock !== undefined);
    expect(batch[0].lock!.fencingToken).toBeGreaterThan(third.lock!.fencingToken);
    await batch[0].lock!.release();
    await eventually('the second caller of the batch holds', () => batch[1].lock !== undefined);
    await batch[1].lock!.release();
  });

  it('grants no caller on its deleted node when our own node ahead is released', async () => {
    const path = `${zk.root}/local`;
    const [p, c] = [await connect(), await connect()];
    const first = await p.acquire(path);
    await queued(path, 1);
    const second = track(p.acquire(path)); // arrives while held: a node of its own
    await queued(path, 2);
    const third = track(c.acquire(path));
    await queued(path, 3);
    await deleteThenRelease(path, 1, first, third, () => !!second.lock);
    expect({ granted: second.lock !== undefined }).toEqual({ granted: false });

    await third.lock!.release();
    await eventually('the second caller holds after C', () => second.lock !== undefined);
    expect(second.lock!.fencingToken).toBeGreaterThan(third.lock!.fencingToken);
    await second.lock!.release();
  });
});
