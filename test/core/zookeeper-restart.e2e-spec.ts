/**
 * ZooKeeper goes away under a held lock. Back within the session timeout: the
 * session survives, the lock is still ours ('uncertain' then 'held'), its signal never aborts.
 * Away for longer than the session timeout: the signal aborts with LockLostError, and another
 * client can take the lock once ZooKeeper is back.
 */
import {
  ConnectionState,
  LockLostError,
  LockState,
  ZkLockClient,
  ZooKeeperUnavailableError,
} from '../../lib';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { scaled } from '../support/time-scale';
import { eventually, testRoot } from './support/zk-admin';

/** Long enough for a JVM restart on a busy machine. */
const LONG_SESSION_MS = 20_000;
const SHORT_SESSION_MS = 2_000;

describe('ZooKeeper stopped and restarted under a held lock', () => {
  const root = testRoot('restart');
  let server: ZooKeeperServer;
  const clients: ZkLockClient[] = [];

  const connect = async (sessionTimeoutMs: number): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs,
      connectTimeoutMs: 30_000,
    });
    clients.push(client);
    return client;
  };

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await server.stop(); // this file's own server: its data goes with it
  });

  it('keeps the lock through a restart shorter than the session timeout', async () => {
    const path = `${root}/short-outage`;
    const locks = await connect(LONG_SESSION_MS);
    const lock = await locks.acquire(path);
    const lockStates: LockState[] = [];
    lock.on('uncertain', () => lockStates.push(lock.state));
    lock.on('reconnected', () => lockStates.push(lock.state));
    const clientStates: ConnectionState[] = [];
    locks.on('state', (state: ConnectionState) => clientStates.push(state));

    await server.members[0].stop();
    await eventually('the holder notices the outage', () => lock.state === 'uncertain');
    expect(lock.signal.aborted).toBe(false);
    server.members[0].start();
    await server.members[0].waitServing();
    await eventually('the holder is back to held', () => lock.state === 'held', LONG_SESSION_MS);
    // The client is RECONNECTED once every one of its sessions is back.
    await eventually('the client is back', () => locks.state === 'RECONNECTED', LONG_SESSION_MS);

    expect(lockStates).toEqual(['uncertain', 'held']);
    expect(clientStates).toEqual(['SUSPENDED', 'RECONNECTED']);
    expect(lock.signal.aborted).toBe(false);
    const other = await connect(LONG_SESSION_MS);
    expect(await other.tryAcquire(path)).toBeNull();
    await lock.release();
    const next = await other.tryAcquire(path);
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('aborts the signal with LockLostError when the outage outlasts the session', async () => {
    const path = `${root}/long-outage`;
    const locks = await connect(SHORT_SESSION_MS);
    const lock = await locks.acquire(path);
    const lostEvents: LockLostError[] = [];
    locks.on('lost', (event: { error: LockLostError }) => lostEvents.push(event.error));

    const stoppedAt = Date.now();
    await server.members[0].stop();
    await eventually('the signal aborts', () => lock.signal.aborted, SHORT_SESSION_MS + 10_000);
    // Stay down for longer than the session timeout before coming back.
    await eventually(
      'outage longer than the session',
      () => Date.now() - stoppedAt > SHORT_SESSION_MS + 1_000,
    );
    server.members[0].start();
    await server.members[0].waitServing();

    const reason = lock.signal.reason;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).path).toBe(path);
    expect(['session-expired', 'connection-lost']).toContain((reason as LockLostError).reason);
    expect(lock.state).toBe('lost');
    expect(lostEvents).toHaveLength(1);
    expect(lostEvents[0].path).toBe(path);

    const other = await connect(LONG_SESSION_MS);
    const next = await other.acquire(path, { waitTimeoutMs: SHORT_SESSION_MS + 15_000 });
    expect(next.state).toBe('held');
    await next.release();
  });

  // Both kinds wait through one outage, each on a path and clients of its own.
  it('a mutex waiter and a read waiter whose wait ends while ZooKeeper is away get ZooKeeperUnavailableError, not LockTimeoutError', async () => {
    const waits = await Promise.all(
      (['mutex', 'read'] as const).map(async (kind) => {
        const path = `${root}/away-${kind}`;
        const holderClient = await connect(LONG_SESSION_MS);
        const holder = await (kind === 'read'
          ? holderClient.writeLock(path).acquire()
          : holderClient.acquire(path));
        const waiterClient = await connect(LONG_SESSION_MS);
        const options = { waitTimeoutMs: scaled(8_000) }; // ends while the server is away
        const waiting =
          kind === 'read'
            ? waiterClient.readLock(path).acquire(options)
            : waiterClient.acquire(path, options);
        const failure = waiting.then(
          () => undefined,
          (err: Error) => err,
        );
        await eventually(`the ${kind} waiter is queued`, async () => {
          return (await waiterClient.inspect(path)).queue.length === 1;
        });
        return { kind, path, holder, failure };
      }),
    );
    await server.members[0].stop();
    try {
      for (const { kind, path, failure } of waits) {
        const error = await failure; // the session is still alive on the server's side
        expect({ kind, error }).toEqual({ kind, error: expect.any(ZooKeeperUnavailableError) });
        expect(error?.message).toContain(`while waiting for lock "${path}"`);
      }
    } finally {
      server.members[0].start();
      await server.members[0].waitServing();
    }
    for (const { holder } of waits) await holder.release();
  });

  it('fails a waiter with ZooKeeperUnavailableError naming the lock when no session comes back', async () => {
    const path = `${root}/no-session`;
    const holder = await (await connect(LONG_SESSION_MS)).acquire(path);
    const waiterClient = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: SHORT_SESSION_MS,
      connectTimeoutMs: SHORT_SESSION_MS,
    });
    clients.push(waiterClient);
    const failure = waiterClient.acquire(path).then(
      () => undefined,
      (err: Error) => err,
    );
    await eventually('the waiter is queued', async () => {
      return (await waiterClient.inspect(path)).queue.length === 1;
    });

    await server.members[0].stop();
    const error = await failure; // session lost after SHORT_SESSION_MS, no new one in time
    server.members[0].start();
    await server.members[0].waitServing();

    expect(error).toBeInstanceOf(ZooKeeperUnavailableError);
    expect(error?.message).toContain(`for lock "${path}"`);
    expect(error?.message).toContain(`within ${SHORT_SESSION_MS} ms`);
    await holder.release().catch(() => undefined); // its session may have expired meanwhile
  });
});
