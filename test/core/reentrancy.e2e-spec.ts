/**
 * Reentrancy: the owner of a lock is the async context that took it. Nested acquisition in that
 * context re-enters (one znode, a hold count); other async contexts in the same process are
 * different owners and wait; a re-entry into a lock the scope lost fails instead of waiting for
 * itself. (The read/write lock's downgrade: read-write-lock.e2e-spec.ts; withLockAll's:
 * multi-lock.e2e-spec.ts; through the NestJS layer: test/nest/reentrancy.e2e-spec.ts.)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AcquireOptions, LockHandle, LockLostError, LockModeError, ZkLockClient } from '../../lib';
import { sessionIndexOf } from '../../lib/core/zookeeper/zk-connection';
import { useCoreFixture } from './support/core-fixture';
import { useOwnServer } from './support/own-server';
import { expireSession } from './support/expire-session';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

type Kind = 'mutex' | 'read' | 'write';

function takeOf(
  locks: ZkLockClient,
  kind: Kind,
  path: string,
  options: AcquireOptions,
): Promise<LockHandle> {
  return kind === 'mutex'
    ? locks.acquire(path, options)
    : (kind === 'read' ? locks.readLock(path) : locks.writeLock(path)).acquire(options);
}

function withLockOf<T>(
  locks: ZkLockClient,
  kind: Kind,
  path: string,
  fn: (lock: LockHandle) => Promise<T>,
): Promise<T> {
  if (kind === 'mutex') return locks.withLock(path, fn);
  return (kind === 'read' ? locks.readLock(path) : locks.writeLock(path)).withLock(fn);
}

/** Each "x:enter" is directly followed by "x:exit", and every worker ran once. */
function expectNoOverlap(events: string[], workers: number): void {
  expect(events).toHaveLength(workers * 2);
  for (let i = 0; i < events.length; i += 2) {
    const name = events[i].split(':')[0];
    expect([events[i], events[i + 1]]).toEqual([`${name}:enter`, `${name}:exit`]);
  }
  expect(new Set(events.map((e) => e.split(':')[0])).size).toBe(workers);
}

// sessions 4: re-entry and in-process exclusion are the same on a client with several sessions.
describe.each([1, 4])('reentrancy and in-process exclusion (sessions: %i)', (sessions) => {
  const zk = useCoreFixture(`reentrancy-${sessions}`, { sessions });

  it('re-enters 3 levels deep in one async context with a single znode and one token', async () => {
    const path = `${zk.root}/nested`;
    const levels: LockHandle[] = [];
    await zk.locks.withLock(path, async (outer) => {
      levels.push(outer);
      await zk.locks.withLock(path, async (middle) => {
        levels.push(middle);
        const inner = await zk.locks.acquire(path, { waitTimeoutMs: 2_000 });
        levels.push(inner);
        expect(await zk.admin.children(path)).toHaveLength(1);
        expect(new Set(levels.map((l) => l.fencingToken)).size).toBe(1);
        await inner.release();
        expect(inner.state).toBe('released');
      });
      // The inner levels are released; the outer hold still owns the znode.
      expect(zk.locks.isHeld(path)).toBe(true);
      expect(outer.state).toBe('held');
      expect(await zk.admin.children(path)).toHaveLength(1);
    });
    expect(levels.map((l) => l.state)).toEqual(['released', 'released', 'released']);
    expect(zk.locks.isHeld(path)).toBe(false);
    expect(await zk.admin.children(path)).toEqual([]);
  });

  // Every pairing of one path's kinds in a scope whose lock was lost: the scope's own lock (the
  // read side, as the write side re-entered by a downgrade) fails with its loss; one path as a
  // mutex and a read/write lock in one process stays a LockModeError, lost or not.
  it.each([
    ['write', 'read', LockLostError],
    ['read', 'write', LockLostError],
    ['write', 'write', LockLostError],
    ['read', 'read', LockLostError],
    ['mutex', 'mutex', LockLostError],
    ['mutex', 'read', LockModeError],
    ['write', 'mutex', LockModeError],
  ] as const)(
    'in a scope whose %s lock was lost, a %s lock fails at once, never a fresh grant',
    async (held, asked, expected) => {
      const path = `${zk.root}/lost-${held}-${asked}`;
      const locks = await ZkLockClient.connect({
        connectionString: zkConnectFromEnv(),
        sessionTimeoutMs: 10_000,
        sessions,
      });
      try {
        const outcome = await withLockOf(locks, held, path, async (lock) => {
          await expireSession(zkConnectFromEnv(), locks, sessionIndexOf(path, sessions));
          await eventually('the lock is lost', () => lock.state === 'lost');
          // The wait is bounded only so that a wrong grant cannot hang the test.
          return takeOf(locks, asked, path, { waitTimeoutMs: 5_000 }).then(
            async (granted) => {
              await granted.release();
              return `granted a fresh ${asked} lock, token ${granted.fencingToken}`;
            },
            (err: unknown) => err,
          );
        });
        expect(outcome).toBeInstanceOf(expected);
        expect(outcome).toMatchObject({ path });
        if (expected === LockLostError)
          expect(outcome).toMatchObject({ reason: 'session-expired' });
        expect(await zk.admin.children(path)).toEqual([]);
      } finally {
        await locks.close();
      }
    },
  );

  it('emits "acquired" with reentrant=true for the nested levels only', async () => {
    const path = `${zk.root}/events`;
    const seen: boolean[] = [];
    const onAcquired = (event: { path: string; reentrant: boolean }): void => {
      if (event.path === path) seen.push(event.reentrant);
    };
    zk.locks.on('acquired', onAcquired);
    await zk.locks.withLock(path, () =>
      zk.locks.withLock(path, () => zk.locks.withLock(path, () => undefined)),
    );
    zk.locks.off('acquired', onAcquired);
    expect(seen).toEqual([false, true, true]);
  });

  it('keeps concurrent withLock callers in one process apart', async () => {
    const path = `${zk.root}/contexts`;
    const events: string[] = [];
    const worker = (name: string) =>
      zk.locks.withLock(path, async () => {
        events.push(`${name}:enter`);
        await sleep(20);
        events.push(`${name}:exit`);
      });
    await Promise.all([worker('a'), worker('b'), worker('c')]);
    expectNoOverlap(events, 3);
  });

  it('keeps plain acquire() calls from concurrent async functions apart', async () => {
    const path = `${zk.root}/plain`;
    const events: string[] = [];
    const worker = async (name: string): Promise<void> => {
      const lock = await zk.locks.acquire(path, { waitTimeoutMs: 10_000 });
      events.push(`${name}:enter`);
      await sleep(20);
      events.push(`${name}:exit`);
      await lock.release();
    };
    await Promise.all([worker('a'), worker('b')]);
    expectNoOverlap(events, 2);
  });

  it('makes tryAcquire from another async context return null while the lock is held', async () => {
    const path = `${zk.root}/try`;
    let taken!: () => void;
    const isTaken = new Promise<void>((resolve) => (taken = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));

    const holder = zk.locks.withLock(path, async () => {
      taken();
      await finished;
    });
    // Started from the test body, not inside the holder's scope: a different owner.
    const other = (async () => {
      await isTaken;
      const attempt = await zk.locks.tryAcquire(path);
      const heldHere = zk.locks.isHeld(path);
      finish();
      return { attempt, heldHere };
    })();

    const [, { attempt, heldHere }] = await Promise.all([holder, other]);
    expect(attempt).toBeNull();
    expect(heldHere).toBe(false);
    const after = await zk.locks.tryAcquire(path);
    expect(after).not.toBeNull();
    await after?.release();
  });

  it('does not let a sibling started later by the same caller re-enter a lock it does not own', async () => {
    const path = `${zk.root}/sibling`;
    let taken!: () => void;
    const isTaken = new Promise<void>((resolve) => (taken = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));

    // Like a server loop: start a job that takes the lock, later start another job.
    const first = (async () => {
      const lock = await zk.locks.acquire(path);
      taken();
      await finished;
      await lock.release();
    })();
    await isTaken;
    const second = await (async () => {
      const attempt = await zk.locks.tryAcquire(path);
      await attempt?.release();
      return attempt;
    })();
    const heldByCaller = zk.locks.isHeld(path);
    finish();
    await first;

    expect(second).toBeNull();
    expect(heldByCaller).toBe(false);
  });
});

/** Expires while the server is frozen for a moment (our clock declares it lost after 2 s). */
const SHORT_SESSION_MS = 2_000;

describe('re-entry into a lock its scope lost (a server of its own, frozen)', () => {
  const zk = useOwnServer('reentrancy-lost', { sessionTimeoutMs: 20_000 });
  const { root, connect } = zk;
  const freezeServerUntil = zk.freezeServerUntil;

  it('fails a re-entry into a lock its scope lost, instead of waiting for itself', async () => {
    const path = `${root}/reenter-lost`;
    const locks = await connect({ sessionTimeoutMs: SHORT_SESSION_MS });
    let outer!: LockHandle;
    const inner = await locks.withLock(path, async (lock) => {
      outer = lock;
      await freezeServerUntil('the lock is lost', () => lock.state === 'lost');
      // E.g. a @DistributedLock service method on the same path, called after the loss. The
      // scope still holds the lost lock (its place in this process), so waiting would be for
      // itself: forever without a waitTimeoutMs.
      return locks
        .withLock(path, () => 'entered', { waitTimeoutMs: 5_000 })
        .catch((err: unknown) => err);
    });
    expect(inner).toBeInstanceOf(LockLostError);
    expect((inner as LockLostError).path).toBe(path);
    expect((inner as LockLostError).message).toContain(path);
    expect(outer.state).toBe('lost');
    // Once the owner has let go, the path can be locked again.
    const again = await locks.acquire(path, { waitTimeoutMs: 10_000 });
    expect(again.fencingToken).toBeGreaterThan(outer.fencingToken);
    await again.release();
  });
});
