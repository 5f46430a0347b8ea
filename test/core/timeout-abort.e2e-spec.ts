/**
 * Issue #2 §5.4: a waiter that times out or is aborted removes its queue node; tryAcquire returns
 * null (and leaves nothing behind) while another process holds the lock.
 */
import { LockAbortedError, LockTimeoutError, ZkLockError } from '../../lib';
import type { LockAgent } from './support/agents';
import { useCoreFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';

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
