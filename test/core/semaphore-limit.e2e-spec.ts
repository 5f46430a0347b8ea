/**
 * A semaphore used with two different maxLeases would let in more holders than the
 * smaller limit allows. Refused in one process before anything is sent, and across processes by
 * the limit recorded on `<path>/leases` (whose data Curator neither reads nor writes), both with
 * an error naming the path and both limits. Once every lease is gone, a new limit may be used.
 */
import { LockModeError, SemaphoreLease, ZkLockClient } from '../../lib';
import { useCoreFixture } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

describe('semaphore maxLeases mismatch', () => {
  const zk = useCoreFixture('sem-limit', { parentCleanupDelayMs: 100 });
  const others: ZkLockClient[] = [];
  afterAll(async () => {
    await Promise.all(others.map((c) => c.close()));
  });

  const p = (name: string): string => `${zk.root}/${name}`;
  /** Another client: its own session, so it acts like another process. */
  const other = async (): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    others.push(client);
    return client;
  };
  const refusal = (attempt: Promise<unknown>): Promise<unknown> =>
    attempt.then(
      (lease) => {
        void (lease as SemaphoreLease | null)?.release();
        return new Error('a second limit was granted a lease');
      },
      (err: unknown) => err,
    );
  const expectRefused = (error: unknown, path: string, held: number, asked: number): void => {
    expect(error).toBeInstanceOf(LockModeError);
    const { message } = error as LockModeError;
    expect(message).toContain(`"${path}"`);
    expect(message).toContain(`maxLeases ${held}`);
    expect(message).toContain(`maxLeases ${asked}`);
  };

  it('in one client: a second maxLeases on a held path fails before anything is sent', async () => {
    const path = p('in-process');
    const one = await zk.locks.semaphore(path, { maxLeases: 1 }).acquire();
    // Another session holds the acquirers' mutex, so both of the semaphore's nodes stay put and
    // any request for a lease would show in their child counters (or wait for that mutex).
    const mutexHolder = await (await other()).acquire(`${path}/locks`);
    const leasesBefore = await zk.admin.childChanges(`${path}/leases`);
    const locksBefore = await zk.admin.childChanges(`${path}/locks`);

    // (The wait is bounded only so that the unfixed code, which queues for the mutex, fails.)
    const error = await refusal(
      zk.locks.semaphore(path, { maxLeases: 2 }).acquire({ waitTimeoutMs: 2_000 }),
    );
    expectRefused(error, path, 1, 2);
    const tryError = await refusal(zk.locks.semaphore(path, { maxLeases: 2 }).tryAcquire());
    expectRefused(tryError, path, 1, 2);
    expect(await zk.admin.childChanges(`${path}/leases`)).toBe(leasesBefore);
    expect(await zk.admin.childChanges(`${path}/locks`)).toBe(locksBefore);

    await Promise.all([one.release(), mutexHolder.release()]);
    // Once the path is idle in this process and nobody holds a lease, another limit is allowed.
    const two = await zk.locks.semaphore(path, { maxLeases: 2 }).acquire();
    await two.release();
  });

  it('across clients: a holder under maxLeases 1 refuses a maxLeases 2 user, and the other way round', async () => {
    const [a, b] = await Promise.all([other(), other()]);
    const path = p('across');
    const held = await a.semaphore(path, { maxLeases: 1 }).acquire();

    const error = await refusal(
      b.semaphore(path, { maxLeases: 2 }).acquire({ waitTimeoutMs: 60_000 }),
    );
    expectRefused(error, path, 1, 2);
    expect(await zk.admin.getData(`${path}/leases`)).toContain('maxLeases=1');
    await eventually(
      'the refused attempt left no lease node',
      async () => (await zk.admin.children(`${path}/leases`)).length === 1,
    );
    await held.release();

    const wide = await a.semaphore(path, { maxLeases: 2 }).acquire();
    expect(await zk.admin.getData(`${path}/leases`)).toContain('maxLeases=2');
    const narrow = await refusal(b.semaphore(path, { maxLeases: 1 }).tryAcquire());
    expectRefused(narrow, path, 2, 1);
    // The same limit still shares: a second holder under maxLeases 2.
    const second = await b.semaphore(path, { maxLeases: 2 }).acquire();
    expect(await zk.admin.children(`${path}/leases`)).toHaveLength(2);
    await Promise.all([wide.release(), second.release()]);
  });

  it('a record changed while this process waited is checked again (not taken from memory)', async () => {
    const [a, c] = await Promise.all([other(), other()]);
    const path = p('changed');
    const leases = `${path}/leases`;
    const wide = a.semaphore(path, { maxLeases: 2 });
    const first = await wide.acquire(); // a has seen its record of maxLeases 2
    const mutexHolder = await c.acquire(`${path}/locks`);
    const second = refusal(wide.acquire({ waitTimeoutMs: 60_000 })); // waits for that mutex
    await eventually(
      'a queued for the mutex',
      async () => (await zk.admin.children(`${path}/locks`)).length === 2,
    );
    // Meanwhile another process's holder under maxLeases 1 took over (as its acquirer would write
    // it); its lease comes first, or the server may delete the emptied container node in between.
    const foreign = await zk.admin.create(`${leases}/_c_other-lease-`, '', 'sequential');
    await first.release();
    await zk.admin.setData(leases, (await zk.admin.getData(leases)).replace('=2', '=1'));
    await mutexHolder.release();

    expectRefused(await second, path, 1, 2);
    await zk.admin.remove(foreign);
  });

  it('a limit recorded by holders that are all gone does not bind the next user', async () => {
    const [a, b] = await Promise.all([other(), other()]);
    const path = p('stale');
    const first = await a.semaphore(path, { maxLeases: 1 }).acquire();
    const record = await zk.admin.getData(`${path}/leases`);
    await first.release();
    await eventually('cleaned up', async () => !(await zk.admin.exists(path)));
    // What a holder leaves when its process dies before its cleanup: the record, no lease.
    await zk.admin.create(`${path}/leases`, record, 'persistent');

    const lease = await b.semaphore(path, { maxLeases: 3 }).acquire();
    expect(await zk.admin.getData(`${path}/leases`)).toContain('maxLeases=3');
    await lease.release();
    await eventually(
      'the leases node with the new record is cleaned up too',
      async () => !(await zk.admin.exists(`${path}/leases`)),
    );
  });
});
