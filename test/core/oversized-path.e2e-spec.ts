/**
 * A ZooKeeper server drops the connection on every request longer than its
 * `jute.maxbuffer` (1 MB by default). A lock path that long made recovery of the "in doubt"
 * create list the same path forever (~450 reconnects a second), ignore the caller's timeout, and
 * keep close() pending. Here the server's jute.maxbuffer is 2 KB, so a 3 KB path (under the
 * library's own limit) shows the same storm: the wait must end in time, the storm with it, and
 * close() must return within its documented bound.
 */
import { ConnectionState, ZkLockClient } from '../../lib';
import { scaled } from '../support/time-scale';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { eventually, testRoot } from './support/zk-admin';

const SERVER_MAX_BUFFER = 2048;

/** How many paths the client's parent cleanup still has to do (see reaper-memory.e2e-spec.ts). */
const remembered = (client: ZkLockClient): number =>
  (client as unknown as { reaper: { remembered: number } }).reaper.remembered;
const WAIT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 2_000;
const SESSION_TIMEOUT_MS = 6_000;

describe('a lock path the server refuses to read', () => {
  const root = testRoot('oversized');
  const tooLong = `/${'x'.repeat(3_000)}`;
  let server: ZooKeeperServer;
  const clients: ZkLockClient[] = [];

  const connect = async (): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: server.connectionString,
      namespace: root,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    clients.push(client);
    return client;
  };

  /** Counts the client's state changes from now on. */
  const stateChanges = (client: ZkLockClient): { count: number; stop(): void } => {
    const counter = { count: 0, stop: () => client.off('state', onState) };
    const onState = (_state: ConnectionState): void => void counter.count++;
    client.on('state', onState);
    return counter;
  };

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start({ jvmFlags: [`-Djute.maxbuffer=${SERVER_MAX_BUFFER}`] });
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await server.stop(); // this file's own server: its data goes with it
  });

  it('ends the wait in time, and the reconnects with it', async () => {
    const locks = await connect();
    const startedAt = Date.now();
    const outcome = await locks.acquire(tooLong, { waitTimeoutMs: WAIT_MS }).then(
      () => 'acquired',
      (err: Error) => err,
    );
    const waitedMs = Date.now() - startedAt;
    expect(outcome).toBeInstanceOf(Error);
    expect(waitedMs).toBeLessThan(WAIT_MS + scaled(3_000));
    // Once the wait is over nothing of it may go on: after cleanup has given the path up (a few
    // tries), the connection stays up.
    await eventually(
      'two seconds without a reconnect',
      async () => {
        if (remembered(locks) > 0) return false;
        const changes = stateChanges(locks);
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        changes.stop();
        return changes.count === 0 && remembered(locks) === 0;
      },
      scaled(30_000),
    );
    // And the client still works.
    await locks.withLock('/fine', () => undefined);
  });

  it('close() returns within its bound while a wait on such a path is under way', async () => {
    const locks = await connect();
    const changes = stateChanges(locks);
    const waiting = locks.acquire(tooLong).catch((err: Error) => err);
    // The storm is under way: the server dropped the connection on the path's request.
    await eventually('the connection dropped on the long path', () => changes.count > 0);
    changes.stop();
    const startedAt = Date.now();
    await locks.close();
    const closedInMs = Date.now() - startedAt;
    // The documented bound: sessionTimeoutMs + requestTimeoutMs.
    expect(closedInMs).toBeLessThan(SESSION_TIMEOUT_MS + REQUEST_TIMEOUT_MS + scaled(2_000));
    expect(await waiting).toBeInstanceOf(Error);
  });
});
