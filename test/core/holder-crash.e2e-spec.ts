/**
 * A holder process killed with SIGKILL cannot release; ZooKeeper deletes its
 * ephemeral node when its session expires, and the next waiter gets the lock then (not before).
 */
import { exited } from './support/agents';
import { useCoreFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const HOLDER_SESSION_MS = 2_000;
/**
 * Generous bound: the holder's session timeout (the server expires it then) plus a margin for a
 * busy machine that scales with it. Not a performance claim.
 */
const UPPER_BOUND_MS = HOLDER_SESSION_MS + scaled(5_000);

describe('holder process killed with SIGKILL', () => {
  const zk = useCoreFixture('crash');
  const path = `${zk.root}/job`;

  it('hands the lock to the waiter after the dead holder session expires', async () => {
    const holder = await zk.startAgent({ sessionTimeoutMs: HOLDER_SESSION_MS });
    const holderToken = await holder.acquire(path);

    let acquiredAt: number | undefined;
    const waiting = zk.locks.acquire(path).then((lock) => {
      acquiredAt = Date.now();
      return lock;
    });
    await eventually(
      'the waiter is queued',
      async () => (await zk.locks.inspect(path)).queue.length === 1,
    );
    expect(acquiredAt).toBeUndefined();

    const killedAt = Date.now();
    holder.child.kill('SIGKILL');
    expect(await exited(holder.child)).toBe('SIGKILL');

    let bound: NodeJS.Timeout | undefined;
    const tooLate = new Promise<'too late'>((resolve) => {
      bound = setTimeout(() => resolve('too late'), UPPER_BOUND_MS);
    });
    const outcome = await Promise.race([waiting, tooLate]);
    clearTimeout(bound);

    expect(outcome).not.toBe('too late');
    const lock = await waiting;
    expect(acquiredAt).toBeGreaterThanOrEqual(killedAt);
    expect(lock.state).toBe('held');
    expect(lock.fencingToken).toBeGreaterThan(holderToken);
    const inspection = await zk.locks.inspect(path);
    expect(inspection.holder?.data.pid).toBe(process.pid);
    await lock.release();
    expect(await zk.admin.children(path)).toEqual([]);
  });
});
