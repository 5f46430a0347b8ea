/**
 * A half-open connection (server frozen, socket still open) is detected by our own
 * liveness clock from the missing ping replies and treated as a disconnect. Without that clock,
 * node-zookeeper-client would report "connected" for as long as the server stays frozen.
 */
import { LockState, ZkLockClient } from '../../lib';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { eventually } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const SESSION_MS = 6_000;

describe('half-open connection', () => {
  let server: ZooKeeperServer;
  let locks: ZkLockClient;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: SESSION_MS,
    });
  });

  afterAll(async () => {
    server.members[0].resume();
    await locks.close();
    await server.stop();
  });

  it('marks a held lock uncertain while the server is frozen, and held again once it answers', async () => {
    const lock = await locks.acquire('/half-open/a');
    const states: LockState[] = [];
    lock.on('uncertain', () => states.push('uncertain'));
    lock.on('reconnected', () => states.push('held'));

    server.members[0].pause(); // SIGSTOP: the TCP socket stays open, nothing answers
    await eventually(
      'the clock notices the silent server',
      () => lock.state === 'uncertain',
      SESSION_MS,
    );
    expect(locks.state).toBe('SUSPENDED');
    server.members[0].resume();
    await eventually('the same session is back', () => lock.state === 'held', scaled(20_000));

    expect(states).toEqual(['uncertain', 'held']);
    expect(lock.signal.aborted).toBe(false);
    await lock.release();
  });
});
