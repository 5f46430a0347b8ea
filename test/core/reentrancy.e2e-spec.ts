/**
 * Issue #2 §5.3: the owner of a lock is the async context that took it. Nested acquisition in
 * that context re-enters (one znode, a hold count); other async contexts in the same process
 * are different owners and wait.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LockHandle, ZkLockClient } from '../../lib';
import { testRoot, ZkAdmin, zkConnectFromEnv } from './support/zk-admin';

/** Each "x:enter" is directly followed by "x:exit", and every worker ran once. */
function expectNoOverlap(events: string[], workers: number): void {
  expect(events).toHaveLength(workers * 2);
  for (let i = 0; i < events.length; i += 2) {
    const name = events[i].split(':')[0];
    expect([events[i], events[i + 1]]).toEqual([`${name}:enter`, `${name}:exit`]);
  }
  expect(new Set(events.map((e) => e.split(':')[0])).size).toBe(workers);
}

describe('reentrancy and in-process exclusion', () => {
  const root = testRoot('reentrancy');
  let locks: ZkLockClient;
  let admin: ZkAdmin;

  beforeAll(async () => {
    locks = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessionTimeoutMs: 10_000,
    });
    admin = await ZkAdmin.connect(zkConnectFromEnv());
  });

  afterAll(async () => {
    await locks.close();
    await admin.removeTree(root);
    admin.close();
  });

  it('re-enters 3 levels deep in one async context with a single znode and one token', async () => {
    const path = `${root}/nested`;
    const levels: LockHandle[] = [];
    await locks.withLock(path, async (outer) => {
      levels.push(outer);
      await locks.withLock(path, async (middle) => {
        levels.push(middle);
        const inner = await locks.acquire(path, { waitTimeoutMs: 2_000 });
        levels.push(inner);
        expect(await admin.children(path)).toHaveLength(1);
        expect(new Set(levels.map((l) => l.fencingToken)).size).toBe(1);
        await inner.release();
        expect(inner.state).toBe('released');
      });
      // The inner levels are released; the outer hold still owns the znode.
      expect(locks.isHeld(path)).toBe(true);
      expect(outer.state).toBe('held');
      expect(await admin.children(path)).toHaveLength(1);
    });
    expect(levels.map((l) => l.state)).toEqual(['released', 'released', 'released']);
    expect(locks.isHeld(path)).toBe(false);
    expect(await admin.children(path)).toEqual([]);
  });

  it('emits "acquired" with reentrant=true for the nested levels only', async () => {
    const path = `${root}/events`;
    const seen: boolean[] = [];
    const onAcquired = (event: { path: string; reentrant: boolean }): void => {
      if (event.path === path) seen.push(event.reentrant);
    };
    locks.on('acquired', onAcquired);
    await locks.withLock(path, () =>
      locks.withLock(path, () => locks.withLock(path, () => undefined)),
    );
    locks.off('acquired', onAcquired);
    expect(seen).toEqual([false, true, true]);
  });

  it('keeps concurrent withLock callers in one process apart', async () => {
    const path = `${root}/contexts`;
    const events: string[] = [];
    const worker = (name: string) =>
      locks.withLock(path, async () => {
        events.push(`${name}:enter`);
        await sleep(20);
        events.push(`${name}:exit`);
      });
    await Promise.all([worker('a'), worker('b'), worker('c')]);
    expectNoOverlap(events, 3);
  });

  it('keeps plain acquire() calls from concurrent async functions apart', async () => {
    const path = `${root}/plain`;
    const events: string[] = [];
    const worker = async (name: string): Promise<void> => {
      const lock = await locks.acquire(path, { waitTimeoutMs: 10_000 });
      events.push(`${name}:enter`);
      await sleep(20);
      events.push(`${name}:exit`);
      await lock.release();
    };
    await Promise.all([worker('a'), worker('b')]);
    expectNoOverlap(events, 2);
  });

  it('makes tryAcquire from another async context return null while the lock is held', async () => {
    const path = `${root}/try`;
    let taken!: () => void;
    const isTaken = new Promise<void>((resolve) => (taken = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));

    const holder = locks.withLock(path, async () => {
      taken();
      await finished;
    });
    // Started from the test body, not inside the holder's scope: a different owner.
    const other = (async () => {
      await isTaken;
      const attempt = await locks.tryAcquire(path);
      const heldHere = locks.isHeld(path);
      finish();
      return { attempt, heldHere };
    })();

    const [, { attempt, heldHere }] = await Promise.all([holder, other]);
    expect(attempt).toBeNull();
    expect(heldHere).toBe(false);
    const after = await locks.tryAcquire(path);
    expect(after).not.toBeNull();
    await after?.release();
  });

  it('does not let a sibling started later by the same caller re-enter a lock it does not own', async () => {
    const path = `${root}/sibling`;
    let taken!: () => void;
    const isTaken = new Promise<void>((resolve) => (taken = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));

    // Like a server loop: start a job that takes the lock, later start another job.
    const first = (async () => {
      const lock = await locks.acquire(path);
      taken();
      await finished;
      await lock.release();
    })();
    await isTaken;
    const second = await (async () => {
      const attempt = await locks.tryAcquire(path);
      await attempt?.release();
      return attempt;
    })();
    const heldByCaller = locks.isHeld(path);
    finish();
    await first;

    expect(second).toBeNull();
    expect(heldByCaller).toBe(false);
  });
});
