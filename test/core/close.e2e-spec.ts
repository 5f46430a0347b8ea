/**
 * `close()` of a client: with ZooKeeper down it ends within the documented bound; a lock asked
 * for or a second close() from a listener that close() runs; a withLock callback never starts
 * after close() released its lock; a closed client's calls fail with ClientClosedError.
 */
import { ClientClosedError } from '../../lib';
import type { LockEvents } from '../../lib/core';
import { useOwnServer } from './support/own-server';
import { TcpProxy } from './support/tcp-proxy';
import { settlesWithin } from './support/zk-admin';

const SESSION_MS = 3000;
const REQUEST_MS = 1000;

describe('close()', () => {
  const zk = useOwnServer('close', { sessionTimeoutMs: SESSION_MS });
  const { root, connect } = zk;

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
      // Bounded by its own deadlines, not by the server: close() settles while ZooKeeper stays
      // out of reach (the proxy refuses every connection until after it), releasing the lock.
      // Without a bound it would hang here, and settlesWithin names the step.
      await settlesWithin('close() with ZooKeeper out of reach', locks.close());
      expect(proxy.connections).toBe(0);
      expect(lock.state).toBe('released');
      expect(lock.signal.reason).toMatchObject({ reason: 'client-closed' });
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

  it('inspect() on a closed client fails with ClientClosedError, not as an unreachable server', async () => {
    const path = `${root}/inspect-closed`;
    const locks = await connect();
    await locks.close();
    const error = await locks.inspect(path).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ClientClosedError);
    expect((error as ClientClosedError).message).toContain(`inspect "${path}"`);
    expect((error as ClientClosedError).message).toContain('ZkLockClient.connect()');
  });
});
