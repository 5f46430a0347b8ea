/**
 * Issue #12 finding 10, edges of the acquire options and of close(): `waitTimeoutMs: 0` tries
 * once; a wait longer than a Node timer can hold is refused; close() with ZooKeeper down ends
 * within the documented bound; a withLock callback never starts after close() released its lock;
 * a second close() from a listener of the first is the same close; a handle's 'lost' listener
 * added after the loss is still told.
 */
import {
  ClientClosedError,
  InvalidLockOptionsError,
  LockAbortedError,
  LockTimeoutError,
} from '../../lib';
import type { LockEvents } from '../../lib/core';
import { expireSession } from './support/expire-session';
import { useOwnServer } from './support/own-server';
import { TcpProxy } from './support/tcp-proxy';
import { eventually, settlesWithin } from './support/zk-admin';

const SESSION_MS = 3000;
const REQUEST_MS = 1000;

describe('edges (issue #12 finding 10)', () => {
  const zk = useOwnServer('edges', { sessionTimeoutMs: SESSION_MS });

  it('waitTimeoutMs: 0 takes a free lock, and fails at once with LockTimeoutError on a held one', async () => {
    const locks = await zk.connect();
    const path = `${zk.root}/zero`;
    const lock = await locks.acquire(path, { waitTimeoutMs: 0 });
    expect(lock.state).toBe('held');
    const other = await zk.connect();
    await expect(other.acquire(path, { waitTimeoutMs: 0 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );
    await expect(
      other.readLock(`${zk.root}/zero-rw`).acquire({ waitTimeoutMs: 0 }),
    ).resolves.toMatchObject({ state: 'held' });
    await lock.release();
    const again = await other.acquire(path, { waitTimeoutMs: 0 });
    await again.release();
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('waitTimeoutMs: 0 with a signal already aborted takes nothing: LockAbortedError', async () => {
    // A multi-path lock or a semaphore asks for its next step with the time left, 0 once the
    // deadline has passed: an abort that landed meanwhile must still win over the try-once.
    const locks = await zk.connect();
    const path = `${zk.root}/zero-aborted`;
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      locks.acquire(path, { waitTimeoutMs: 0, signal: controller.signal }),
    ).rejects.toBeInstanceOf(LockAbortedError);
    await expect(
      locks.acquireAll([`${path}-a`, `${path}-b`], { waitTimeoutMs: 0, signal: controller.signal }),
    ).rejects.toBeInstanceOf(LockAbortedError);
    for (const taken of [path, `${path}-a`, `${path}-b`]) {
      expect(await zk.admin.children(taken)).toEqual([]);
    }
  });

  it('a wait longer than 2^31-1 ms (or negative, or NaN) is refused before any request', async () => {
    const locks = await zk.connect();
    const other = await zk.connect();
    const path = `${zk.root}/long`;
    const held = await other.acquire(path);
    for (const waitTimeoutMs of [2 ** 31, -1, Number.NaN]) {
      const error = await locks.acquire(path, { waitTimeoutMs }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidLockOptionsError);
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toMatch(/waitTimeoutMs must be from 0 to 2147483647 ms/);
    }
    await expect(
      locks.semaphore(`${zk.root}/long-sem`, { maxLeases: 1 }).acquire({ waitTimeoutMs: 2 ** 32 }),
    ).rejects.toBeInstanceOf(InvalidLockOptionsError);
    expect(await zk.admin.children(path)).toHaveLength(1); // only the holder's node
    await held.release();
  });

  it('close() with ZooKeeper down ends within sessionTimeoutMs + requestTimeoutMs (documented bound)', async () => {
    // ZooKeeper out of reach through a proxy that drops and refuses connections, not a stopped
    // server: a restart gives up its port for a moment, which a server of a file running beside
    // this one may take (two fresh-clone runs had the tests after the restart get no answer).
    const proxy = await TcpProxy.start(zk.server.members[0].clientPort);
    try {
      const locks = await zk.connect({
        connectionString: proxy.connectionString,
        requestTimeoutMs: REQUEST_MS,
      });
      const lock = await locks.acquire(`${zk.root}/down`);
      proxy.block();
      const started = Date.now();
      await locks.close();
      // Generous slack for a loaded machine; without a bound close() would hang here.
      expect(Date.now() - started).toBeLessThan(3 * (SESSION_MS + REQUEST_MS));
      expect(lock.state).toBe('released');
    } finally {
      await proxy.close();
    }
  });

  it("a lock asked for from a 'lost' listener while close() runs fails with ClientClosedError", async () => {
    // close() tells its waiters first and its holders after: a holder's listener that asked
    // again (to take the lock back) once queued behind another process's lock for good.
    const locks = await zk.connect();
    const other = await zk.connect();
    const path = `${zk.root}/lost-listener`;
    const theirs = await other.acquire(`${path}-b`);
    const mine = await locks.acquire(`${path}-a`);
    let asked: Promise<unknown> | undefined;
    mine.signal.addEventListener('abort', () => {
      asked = locks.acquire(`${path}-b`).catch((e: unknown) => e);
    });
    await settlesWithin('close()', locks.close());
    expect(asked).toBeDefined();
    expect(await settlesWithin("the acquire from the 'lost' listener", asked!)).toBeInstanceOf(
      ClientClosedError,
    );
    await theirs.release();
    expect(await zk.admin.children(`${path}-b`)).toEqual([]);
  });

  it("close() called again from a 'lost' listener that close() runs gets the same promise: one shutdown", async () => {
    // close() tells each holder's listeners while it runs: a second close() from there once
    // started a second shutdown (the first had not stored its promise yet).
    const locks = await zk.connect();
    const pool = (locks as unknown as { pool: { close(): Promise<void> } }).pool;
    const poolClose = vi.spyOn(pool, 'close');
    const path = `${zk.root}/close-again`;
    const held = await Promise.all([locks.acquire(`${path}-a`), locks.acquire(`${path}-b`)]);
    const lost: string[] = [];
    const again: Promise<void>[] = [];
    locks.on('lost', (event: LockEvents['lost']) => {
      lost.push(event.path);
      again.push(locks.close());
    });
    const closing = locks.close();
    expect(again).toHaveLength(2);
    for (const inner of again) expect(inner).toBe(closing);
    await settlesWithin('close()', closing);
    expect(poolClose).toHaveBeenCalledTimes(1);
    expect(lost.sort()).toEqual([`${path}-a`, `${path}-b`]);
    expect(held.map((lock) => lock.state)).toEqual(['released', 'released']);
    for (const p of [`${path}-a`, `${path}-b`]) expect(await zk.admin.children(p)).toEqual([]);
  });

  it('a withLock callback never starts after close() released its lock', async () => {
    const locks = await zk.connect();
    let ran = false;
    let closing: Promise<void> | undefined;
    // close() runs in the grant's own turn (the 'acquired' event), before the callback's turn.
    locks.once('acquired', () => (closing = locks.close()));
    const outcome = await locks
      .withLock(`${zk.root}/closing`, () => {
        ran = true;
      })
      .catch((e: unknown) => e);
    await closing;
    expect(outcome).toBeInstanceOf(ClientClosedError);
    expect(ran).toBe(false);
    expect(await zk.admin.children(`${zk.root}/closing`)).toEqual([]);
  });

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
