/**
 * A listener of the client's events that throws changes nothing a lock does: the grant it was
 * told of is the caller's, the release it was told of hands the lock on, and its error goes to
 * the client's 'error' listeners (with none: an uncaught exception on its own, lib/core/events.ts).
 */
import { ZkLockClient } from '../../lib';
import { useTestRoot } from './support/core-fixture';
import { zkConnectFromEnv } from './support/zk-admin';

describe('a listener that throws', () => {
  const zk = useTestRoot('listener-errors');
  const clients: ZkLockClient[] = [];
  const connect = async (): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace: zk.root,
    });
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it("on 'waiting', 'waited' or 'acquired' leaves the caller its lock, and others can take it after", async () => {
    const locks = await connect();
    const other = await connect();
    const errors: unknown[] = [];
    locks.on('error', (err) => errors.push(err));
    for (const event of ['waiting', 'waited', 'acquired'] as const) {
      const bug = new Error(`${event} listener bug`);
      const listener = (): never => {
        throw bug;
      };
      locks.on(event, listener);
      const lock = await locks.acquire(`/after-${event}`);
      expect(lock.state).toBe('held');
      locks.off(event, listener);
      await lock.release();
      expect(errors.pop()).toBe(bug);
      const next = await other.acquire(`/after-${event}`, { waitTimeoutMs: 10_000 });
      await next.release();
    }
    // A re-entry tells 'acquired' too: its count is as if no listener threw.
    const bug = new Error('re-entry listener bug');
    await locks.withLock('/reentered', async () => {
      locks.on('acquired', () => {
        throw bug;
      });
      await locks.withLock('/reentered', () => undefined);
      locks.removeAllListeners('acquired');
    });
    expect(errors).toEqual([bug]);
    const after = await other.acquire('/reentered', { waitTimeoutMs: 10_000 });
    await after.release();
  });

  it("on 'released' still hands the lock to the next caller of the process", async () => {
    const locks = await connect();
    const errors: unknown[] = [];
    locks.on('error', (err) => errors.push(err));
    const first = await locks.acquire('/handed-on');
    const second = locks.acquire('/handed-on', { waitTimeoutMs: 10_000 });
    const bug = new Error('released listener bug');
    locks.on('released', () => {
      throw bug;
    });
    await first.release();
    const lock = await second;
    locks.removeAllListeners('released');
    await lock.release();
    expect(errors).toEqual([bug]);
  });
});
