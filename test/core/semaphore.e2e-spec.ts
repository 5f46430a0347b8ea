/**
 * The semaphore. Never more than maxLeases holders at once across processes, also
 * when a holder crashes; Curator InterProcessSemaphoreV2's layout; bad input refused before any
 * request; nothing left behind after a timeout, an abort or close().
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ClientClosedError,
  InvalidLockOptionsError,
  InvalidLockPathError,
  LockAbortedError,
  LockLostError,
  LockTimeoutError,
  SemaphoreLease,
} from '../../lib';
import { exited, nextMessage, spawnFixture } from './support/agents';
import { useCoreFixture } from './support/core-fixture';
import { maxConcurrency } from './support/critical-log';
import { runWorkers, scratchDir } from './support/workers';
import { eventually, settlesWithin } from './support/zk-admin';

describe('semaphore', () => {
  const zk = useCoreFixture('semaphore', { parentCleanupDelayMs: 100 });
  const scratch = scratchDir();
  afterAll(() => scratch.remove());

  const p = (name: string): string => `${zk.root}/${name}`;

  it("uses Curator InterProcessSemaphoreV2's layout: <path>/locks and <path>/leases/_c_<uuid>-lease-<seq>", async () => {
    const semaphore = zk.locks.semaphore(p('layout'), { maxLeases: 2 });
    const lease = await semaphore.acquire();
    const leases = await zk.admin.children(`${p('layout')}/leases`);
    expect(leases).toHaveLength(1);
    expect(leases[0]).toMatch(/^_c_[0-9a-f-]{36}-lease-\d{10}$/);
    expect(lease).toMatchObject({ path: p('layout'), leases: 1, state: 'held' });
    await lease.release();
    await lease.release(); // idempotent
    expect(lease.state).toBe('released');
    expect(await zk.admin.children(`${p('layout')}/leases`)).toEqual([]);
    // Idle: the reaper removes the leases and locks nodes and the semaphore node itself.
    await eventually(
      'the semaphore path is cleaned up',
      async () => !(await zk.admin.exists(p('layout'))),
    );
  });

  it('tryAcquire returns null when every lease is taken; several leases are all or nothing', async () => {
    const semaphore = zk.locks.semaphore(p('try'), { maxLeases: 3 });
    const two = await semaphore.acquire({ leases: 2 });
    expect(two.leases).toBe(2);
    expect(await zk.admin.children(`${p('try')}/leases`)).toHaveLength(2);
    expect(await semaphore.tryAcquire({ leases: 2 })).toBeNull();
    await eventually('the refused attempt left nothing behind', async () => {
      return (await zk.admin.children(`${p('try')}/leases`)).length === 2;
    });
    const one = await semaphore.tryAcquire();
    expect(one).not.toBeNull();
    expect(await semaphore.tryAcquire()).toBeNull();
    await Promise.all([two.release(), one!.release()]);
  });

  it('waitTimeoutMs: 0 takes a free lease (the deadline bounds waiting, not requests), and only waits when there is none', async () => {
    const semaphore = zk.locks.semaphore(p('zero'), { maxLeases: 2 });
    const first = await semaphore.acquire({ waitTimeoutMs: 0 }); // the paths are created too
    const second = await semaphore.acquire({ waitTimeoutMs: 0 });
    expect([first.state, second.state]).toEqual(['held', 'held']);
    await expect(semaphore.acquire({ waitTimeoutMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    await Promise.all([first.release(), second.release()]);
  });

  it('a timeout or an abort leaves no lease node and frees the acquirers mutex', async () => {
    const semaphore = zk.locks.semaphore(p('timeout'), { maxLeases: 1 });
    // Each step named, so that a hang fails naming its step: once, in a full run beside two busy
    // loops, this test hung until its 120 s timeout (most likely the abort below landing before
    // the waiter listened for it; the next test pins that window down).
    const held = await settlesWithin('the first acquire', semaphore.acquire());
    const timedOut = await settlesWithin(
      'the acquire that times out after 500 ms',
      semaphore.acquire({ waitTimeoutMs: 500 }).catch((e: unknown) => e),
    );
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    expect(timedOut).toMatchObject({ path: p('timeout'), waitTimeoutMs: 500 });
    const controller = new AbortController();
    const aborted = semaphore.acquire({ signal: controller.signal });
    await eventually('the waiter has a lease node', async () => {
      return (await zk.admin.children(`${p('timeout')}/leases`)).length === 2;
    });
    controller.abort(new Error('stop'));
    await expect(settlesWithin('the aborted acquire', aborted)).rejects.toBeInstanceOf(
      LockAbortedError,
    );
    await eventually('only the holder is left', async () => {
      const leases = await zk.admin.children(`${p('timeout')}/leases`);
      const locks = await zk.admin.children(`${p('timeout')}/locks`);
      return leases.length === 1 && locks.length === 0;
    });
    await settlesWithin('the release', held.release());
  });

  // The lease node appears before the acquire waits for room or is granted: it still lists the
  // leases and checks the limit. An abort in that window once went unseen: the acquire waited
  // until the leases changed, or was granted. A child watch fires as the first node is created,
  // and the test aborts then.
  it('an abort that lands while the lease node is being created ends the wait for room', async () => {
    const semaphore = zk.locks.semaphore(p('abort-race-wait'), { maxLeases: 1 });
    const held = await settlesWithin('the holder acquires', semaphore.acquire());
    const leases = `${p('abort-race-wait')}/leases`;
    for (let round = 0; round < 5; round++) {
      const { changed } = await zk.admin.watchChildren(leases);
      const controller = new AbortController();
      const waiting = semaphore.acquire({ signal: controller.signal });
      await settlesWithin("the waiter's lease node is created", changed);
      controller.abort(new Error('stop'));
      // No room: nothing can be granted before the abort, so every round must end with it.
      await expect(
        settlesWithin(`round ${round}: the acquire aborted as its node appeared`, waiting),
      ).rejects.toBeInstanceOf(LockAbortedError);
      await eventually('only the holder is left', async () => {
        return (await zk.admin.children(leases)).length === 1;
      });
    }
    await held.release();
  });

  it('an abort that lands while the lease nodes are being created takes no lease, with room', async () => {
    // Two leases of three with one held: after the watch fires on the first node the acquire
    // still creates the second and lists again, so the abort nearly always lands before the
    // grant. It is asked to take no lease then; a round whose grant came first (the watch
    // event can reach this process late on a loaded machine) is released and not counted.
    const semaphore = zk.locks.semaphore(p('abort-race-room'), { maxLeases: 3 });
    const held = await settlesWithin('the holder acquires', semaphore.acquire());
    const leases = `${p('abort-race-room')}/leases`;
    let aborted = 0;
    for (let round = 0; round < 8; round++) {
      const { changed } = await zk.admin.watchChildren(leases);
      const controller = new AbortController();
      const waiting = semaphore.acquire({ leases: 2, signal: controller.signal });
      await settlesWithin("the acquire's first lease node is created", changed);
      controller.abort(new Error('stop'));
      const outcome = await settlesWithin(
        `round ${round}: the acquire ends`,
        waiting.catch((e: unknown) => e),
      );
      if (outcome instanceof LockAbortedError) aborted++;
      else await (outcome as SemaphoreLease).release();
      await eventually('only the holder is left', async () => {
        return (await zk.admin.children(leases)).length === 1;
      });
    }
    // A grant that never looks at the signal aborts no round.
    expect(aborted).toBeGreaterThan(0);
    await held.release();
  });

  it('bad input fails before anything is sent to ZooKeeper', async () => {
    expect(() => zk.locks.semaphore(p('bad'), { maxLeases: 0 })).toThrow(InvalidLockOptionsError);
    expect(() => zk.locks.semaphore(p('bad'), { maxLeases: 1.5 })).toThrow(/maxLeases/);
    expect(() => zk.locks.semaphore('bad/path', { maxLeases: 1 })).toThrow(InvalidLockPathError);
    const semaphore = zk.locks.semaphore(p('bad'), { maxLeases: 2 });
    await expect(semaphore.acquire({ leases: 3 })).rejects.toThrow(
      new RegExp(
        `Invalid lock options for ${p('bad')}: leases must be an integer from 1 to maxLeases \\(2\\)`,
      ),
    );
    await expect(semaphore.acquire({ leases: 0 })).rejects.toBeInstanceOf(InvalidLockOptionsError);
    expect(await zk.admin.exists(p('bad'))).toBe(false);
  });

  it("a lease node deleted by someone else aborts the lease's signal", async () => {
    const lease = await zk.locks.semaphore(p('deleted'), { maxLeases: 2 }).acquire();
    const signal = lease.watchForLoss();
    expect(signal).toBe(lease.signal);
    const [node] = await zk.admin.children(`${p('deleted')}/leases`);
    await zk.admin.removeTree(`${p('deleted')}/leases/${node}`);
    await eventually('the signal aborted', () => signal.aborted);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect(signal.reason).toMatchObject({ reason: 'node-deleted' });
    expect(lease.state).toBe('lost');
    await lease.release();
  });

  it('3 processes x 4 callers on 2 leases: never more than 2 holders, and 2 at once at times', async () => {
    const logFile = join(scratch.dir, 'sem.log');
    writeFileSync(logFile, '');
    const env = {
      SEM_PATH: p('limit'),
      MAX_LEASES: '2',
      CALLERS: '4',
      CYCLES: '5',
      LOG_FILE: logFile,
    };
    await runWorkers('semaphore-worker', 3, env);
    const { max, sections } = maxConcurrency(logFile);
    expect(sections).toBe(3 * 4 * 5);
    expect(max).toBe(2);
    await eventually('no lease node is left', async () => {
      return (await zk.admin.children(`${p('limit')}/leases`)).length === 0;
    });
  });

  it('a crashed holder (SIGKILL) frees its lease when its session expires, never before', async () => {
    const logFile = join(scratch.dir, 'crash.log');
    writeFileSync(logFile, '');
    const holder = spawnFixture('semaphore-worker', {
      SEM_PATH: p('crash'),
      MAX_LEASES: '1',
      LOG_FILE: logFile,
      HOLD: '1',
      SESSION_MS: '4000',
    });
    await nextMessage(holder, () => true);
    holder.send('go');
    await nextMessage<{ type: string }>(holder, (m) => m.type === 'holding');
    const semaphore = zk.locks.semaphore(p('crash'), { maxLeases: 1 });
    const waiting = semaphore.acquire();
    let granted = false;
    void waiting.then(() => (granted = true));
    await eventually('the waiter queued', async () => {
      return (await zk.admin.children(`${p('crash')}/leases`)).length === 2;
    });
    expect(granted).toBe(false);
    holder.kill('SIGKILL');
    await exited(holder);
    const lease = await waiting;
    expect(await zk.admin.children(`${p('crash')}/leases`)).toHaveLength(1);
    await lease.release();
  });

  it('close() ends waits with ClientClosedError and releases held leases', async () => {
    const { ZkLockClient } = await import('../../lib');
    const client = await ZkLockClient.connect({ connectionString: process.env.ZK_CONNECT! });
    const semaphore = client.semaphore(p('close'), { maxLeases: 1 });
    const lease = await semaphore.acquire();
    const signal = lease.signal;
    const waiting = semaphore.acquire().catch((e: unknown) => e);
    await eventually('the waiter queued', async () => {
      return (await zk.admin.children(`${p('close')}/leases`)).length === 2;
    });
    await client.close();
    expect(await waiting).toBeInstanceOf(ClientClosedError);
    expect(signal.reason).toMatchObject({ reason: 'client-closed' });
    expect(lease.state).toBe('released');
    expect(await zk.admin.children(`${p('close')}/leases`)).toEqual([]);
  });
});
