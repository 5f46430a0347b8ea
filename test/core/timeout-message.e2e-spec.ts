/**
 * What a timeout says of who was ahead: what this process knows. ZooKeeper's queue shows nodes;
 * a node of another process may stand for a batch of its callers, so those are counted as
 * nodes, and this process's own callers ahead (holding or waiting) as callers.
 */
import { LockTimeoutError } from '../../lib';
import { scaled } from '../support/time-scale';
import { useCoreFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';

describe('LockTimeoutError counts who is ahead', () => {
  const zk = useCoreFixture('timeout-message');

  it('a holder and a waiter of other processes, and a caller of its own', async () => {
    const path = `${zk.root}/ahead`;
    const queued = async (count: number): Promise<void> =>
      eventually(
        `${count} nodes queued`,
        async () => (await zk.admin.children(path)).length === count,
      );
    const holder = await zk.startAgent();
    const waiter = await zk.startAgent();
    await holder.acquire(path);
    const theirs = waiter.acquire(path);
    await queued(2);
    // One caller of ours waits on its node; the one that times out waits behind it.
    const ours = zk.locks.acquire(path, { waitTimeoutMs: scaled(60_000) });
    await queued(3);
    const error = await zk.locks.acquire(path, { waitTimeoutMs: scaled(1_500) }).then(
      () => new Error('acquired'),
      (err: Error) => err,
    );
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as LockTimeoutError).queue).toEqual({ otherNodes: 2, ownCallers: 1 });
    expect((error as LockTimeoutError).ahead).toBe(3);
    expect(error.message).toContain(
      '(ahead of it: 2 queue nodes of other processes, each one caller or a batch of that ' +
        "process's callers, and 1 caller of this process, holding or waiting)",
    );
    await holder.release(path);
    await theirs;
    await waiter.release(path);
    await (await ours).release();
  });
});
