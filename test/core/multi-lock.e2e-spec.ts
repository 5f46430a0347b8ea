/**
 * The multi-path lock (acquireAll / withLockAll). All or nothing, one canonical
 * order (no deadlock between {a,b} and {b,a}), one wait budget, release of what was taken on a
 * timeout or an abort, release in reverse order, a signal that aborts when any member is lost.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  InvalidLockOptionsError,
  InvalidLockPathError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  MultiLockHandle,
  ZkLockClient,
} from '../../lib';
import { sessionIndexOf } from '../../lib/core/zookeeper/zk-connection';

import { useCoreFixture } from './support/core-fixture';
import { readCriticalSections } from './support/critical-log';
import { expireSession } from './support/expire-session';
import { runWorkers, scratchDir } from './support/workers';
import { eventually, settlesWithin, zkConnectFromEnv } from './support/zk-admin';

describe('multi-path lock', () => {
  const zk = useCoreFixture('multi', { parentCleanupDelayMs: 100 });
  const scratch = scratchDir();
  afterAll(() => scratch.remove());

  const p = (name: string): string => `${zk.root}/${name}`;

  it('takes the paths in one canonical order, drops duplicates, and re-enters inside withLockAll', async () => {
    const seen: string[] = [];
    const onAcquired = (e: { path: string }): void => void seen.push(e.path);
    zk.locks.on('acquired', onAcquired);
    try {
      await zk.locks.withLockAll([p('c'), p('a'), p('b'), p('a')], async (multi) => {
        expect(multi.paths).toEqual([p('a'), p('b'), p('c')]);
        expect(multi.fencingTokens).toHaveLength(3);
        expect(multi.state).toBe('held');
        for (const path of multi.paths) expect(zk.locks.isHeld(path)).toBe(true);
        // Re-entry of a member in the owner scope: no wait, the same token.
        const again = await zk.locks.acquire(p('b'), { waitTimeoutMs: 1000 });
        expect(again.fencingToken).toBe(multi.fencingTokens[1]);
        await again.release();
      });
    } finally {
      zk.locks.off('acquired', onAcquired);
    }
    expect(seen.slice(0, 3)).toEqual([p('a'), p('b'), p('c')]);
    expect(zk.locks.isHeld(p('a'))).toBe(false);
  });

  it('releases in reverse order', async () => {
    const released: string[] = [];
    const onReleased = (e: { path: string }): void => void released.push(e.path);
    zk.locks.on('released', onReleased);
    try {
      const multi = await zk.locks.acquireAll([p('r2'), p('r1'), p('r3')]);
      await multi.release();
      await multi.release(); // idempotent
      expect(multi.state).toBe('released');
    } finally {
      zk.locks.off('released', onReleased);
    }
    expect(released).toEqual([p('r3'), p('r2'), p('r1')]);
  });

  it('all or nothing: a timeout on one path releases the others and reports the whole budget', async () => {
    const agent = await zk.startAgent();
    await agent.acquire(p('t2'));
    const error = await zk.locks
      .acquireAll([p('t3'), p('t2'), p('t1')], { waitTimeoutMs: 1500 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ path: p('t2'), waitTimeoutMs: 1500 });
    // t1 was taken first and must be free again; t3 was never taken.
    const tried = await agent.send({ op: 'tryAcquire', path: p('t1') });
    expect(tried).toMatchObject({ type: 'tried' });
    expect(tried.type === 'tried' && tried.token).toBeTruthy();
    expect(await zk.admin.children(p('t3'))).toEqual([]);
    await agent.release(p('t1'));
    await agent.release(p('t2'));
  });

  it('an abort while waiting releases what was taken', async () => {
    const agent = await zk.startAgent();
    await agent.acquire(p('ab2'));
    const controller = new AbortController();
    const pending = zk.locks.acquireAll([p('ab1'), p('ab2')], { signal: controller.signal });
    await eventually(
      'ab2 has a waiter',
      async () => (await zk.admin.children(p('ab2'))).length > 1,
    );
    controller.abort(new Error('shutting down'));
    await expect(pending).rejects.toBeInstanceOf(LockAbortedError);
    await eventually('ab1 is free', async () => (await zk.admin.children(p('ab1'))).length === 0);
    expect(zk.locks.isHeld(p('ab1'))).toBe(false);
    await agent.release(p('ab2'));
  });

  it("the handle's signal aborts with LockLostError when any member is lost", async () => {
    const multi = await zk.locks.acquireAll([p('l1'), p('l2')]);
    const signal = multi.watchForLoss();
    expect(signal).toBe(multi.signal);
    const [node] = await zk.admin.children(p('l2'));
    await zk.admin.removeTree(`${p('l2')}/${node}`);
    await eventually('the signal aborted', () => signal.aborted);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(signal.reason).toMatchObject({ path: p('l2'), reason: 'node-deleted' });
    expect(multi.state).toBe('lost');
    await multi.release();
  });

  // sessions 4: a and b are on different sessions, and only a's session expires;
  // sessions 1: the waiter on b is on the expired session too, and queues again on the next one.
  it.each([1, 4])(
    'a member lost while a later one is waited for fails the whole acquire with LockLostError, leaving no node (sessions: %i)',
    async (sessions) => {
      const a = p(`lost-a-${sessions}`);
      let b = p(`lost-b-${sessions}`);
      for (
        let i = 0;
        sessionIndexOf(b, sessions) === sessionIndexOf(a, sessions) && sessions > 1;
        i++
      ) {
        b = p(`lost-b${i}-${sessions}`); // sorts after a: a is taken first
      }
      const locks = await ZkLockClient.connect({
        connectionString: zkConnectFromEnv(),
        sessionTimeoutMs: 10_000,
        sessions,
      });
      try {
        // Another process: it holds b, then takes a (one process: a start costs seconds).
        const other = await zk.startAgent();
        await other.acquire(b);
        const outcome = locks.acquireAll([b, a]).then(
          (multi): MultiLockHandle | Error => multi,
          (err: Error) => err,
        );
        await eventually(
          'the client holds a and waits for b',
          async () =>
            (await zk.admin.children(a)).length === 1 && (await zk.admin.children(b)).length === 2,
        );
        // The other process queues for a; a's session expires on the server, the other holds a.
        const otherHoldsA = other.acquire(a);
        await expireSession(zkConnectFromEnv(), locks, sessionIndexOf(a, sessions));
        await otherHoldsA;

        // Told at once: the wait for b ends while b is still held.
        const result = await settlesWithin('the acquireAll settles while b is held', outcome);
        if (!(result instanceof Error)) {
          const states = result.locks.map((l) => `${l.path}: ${l.state}`).join(', ');
          await result.release();
          expect.fail(`acquireAll resolved with ${states} while the other process holds ${a}`);
        }
        expect(result).toBeInstanceOf(LockLostError);
        expect(result).toMatchObject({ path: a, reason: 'session-expired' });
        // Nothing of ours is left: a and b have the other process's node alone.
        expect(await zk.admin.children(a)).toHaveLength(1);
        await eventually(
          "b has the other process's node alone",
          async () => (await zk.admin.children(b)).length === 1,
        );
        await other.release(b);
        await other.release(a);
      } finally {
        await locks.close();
      }
    },
  );

  it('bad input fails before anything is sent to ZooKeeper', async () => {
    await expect(zk.locks.acquireAll([])).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(zk.locks.acquireAll([])).rejects.toThrow(/path list is empty/);
    await expect(zk.locks.acquireAll([p('ok'), 'no-slash'])).rejects.toBeInstanceOf(
      InvalidLockPathError,
    );
    expect(await zk.admin.exists(p('ok'))).toBe(false);
  });

  // sessions 4: the members of one multi-path lock are on different sessions of each process.
  it.each([1, 4])(
    '3 processes x 4 callers taking overlapping sets in random orders: no deadlock, no overlap (sessions: %i)',
    async (sessions) => {
      const paths = ['m1', 'm2', 'm3'].map((m) => p(`${m}-${sessions}`));
      // The root is random: the last path is chosen so that the paths use more than one session.
      const sessionsOf = (list: string[]) => new Set(list.map((x) => sessionIndexOf(x, 4))).size;
      for (let i = 4; sessionsOf(paths) < 2; i++) paths[2] = p(`m${i}-${sessions}`);
      expect(sessionsOf(paths)).toBeGreaterThan(1);
      const logDir = join(scratch.dir, `multi-${sessions}`);
      mkdirSync(logDir);
      paths.forEach((_, i) => writeFileSync(join(logDir, `${i}.log`), ''));
      const env = {
        PATHS: paths.join(','),
        CALLERS: '4',
        CYCLES: '5',
        LOG_DIR: logDir,
        SESSIONS: String(sessions),
      };
      await runWorkers('multi-cycle-worker', 3, env);

      let total = 0;
      for (const file of readdirSync(logDir)) {
        const sections = readCriticalSections(join(logDir, file)); // throws on any overlap
        for (let i = 1; i < sections.length; i++) {
          expect(sections[i].token).toBeGreaterThan(sections[i - 1].token);
        }
        total += sections.length;
      }
      // Every cycle took at least two paths.
      expect(total).toBeGreaterThanOrEqual(3 * 4 * 5 * 2);
      for (const path of paths) {
        await eventually(
          `${path} is empty`,
          async () => (await zk.admin.children(path)).length === 0,
        );
      }
    },
  );
});
