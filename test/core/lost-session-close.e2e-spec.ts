/**
 * close() of a client whose session is already lost returns promptly. The lost session keeps
 * trying to reach ZooKeeper, to close itself there (its nodes go at once if a server comes back),
 * within another session timeout; close() used to wait for that, so a client closed while
 * ZooKeeper was down took up to a whole session timeout more (with a 30 s session, one NestJS
 * app's shutdown came near its test's hook timeout). Its nodes count as gone already: the
 * owner's close ends it at once (docs/design.md "The connection layer").
 */
import { ConnectionState, ZkLockClient } from '../../lib';
import { trackOwnResources } from '../support/own-resources';
import { scaled } from '../support/time-scale';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { eventually } from './support/zk-admin';

describe('close() of a client whose session is lost', () => {
  let server: ZooKeeperServer;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('returns without waiting for the lost session while ZooKeeper is down', async () => {
    const SESSION_MS = 6_000;
    let closeMs = Infinity;
    const own = await trackOwnResources(async () => {
      const locks = await ZkLockClient.connect({
        connectionString: server.connectionString,
        sessionTimeoutMs: SESSION_MS,
      });
      const states: ConnectionState[] = [];
      locks.on('state', (state: ConnectionState) => states.push(state));
      await server.members[0].stop();
      // Our clock ends the session a session timeout after ZooKeeper was last heard from.
      await eventually(
        'the session is lost',
        () => states.includes('LOST'),
        scaled(4 * SESSION_MS),
      );
      const startedAt = Date.now();
      await locks.close();
      closeMs = Date.now() - startedAt;
      expect(locks.state).toBe('CLOSED');
    });
    // The lost session's background close is given a whole session timeout: half of it is far
    // more than ending at once takes, and far less than what waiting for it took.
    expect(closeMs).toBeLessThan(SESSION_MS / 2);
    expect(await own.leftOpen()).toEqual([]);
  });
});
