/**
 * `auth` across connections and sessions against real servers. Servers that
 * refuse the credentials (AUTH_FAILED), at connect or later, end the client with
 * ZooKeeperAuthFailedError and no retry; the credentials are sent again on a reconnect of the
 * same session and in the new session after LOST (creator-only paths stay usable).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZkLockClient, ZooKeeperAuthFailedError } from '../../lib';
import { mntr, ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { eventually, testRoot, ZkAdmin } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const CREDENTIALS = 'orders-app:s3cret-Pa55';

describe('servers that refuse the credentials (AUTH_FAILED)', () => {
  let server: ZooKeeperServer;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    // A server without the digest provider answers AUTH_FAILED and closes the connection.
    server = await ZooKeeperServer.start({
      extraConfig: ['DigestAuthenticationProvider.enabled=false'],
    });
  });
  afterAll(() => server.stop());

  it('connect fails with ZooKeeperAuthFailedError naming what to fix, and never retries', async () => {
    const port = server.members[0].clientPort;
    const idle = (await mntr(port)).zk_num_alive_connections; // counts the mntr connection
    const connect = ZkLockClient.connect({
      connectionString: server.connectionString,
      auth: CREDENTIALS,
      connectTimeoutMs: 60_000,
    });
    const error = await connect.then(
      () => new Error('connected'),
      (err) => err,
    );
    expect(error).toBeInstanceOf(ZooKeeperAuthFailedError);
    expect(error.message).toMatch(/AUTH_FAILED.*will not retry.*`auth` option.*"user:password"/);
    expect(error.message).not.toContain('s3cret');
    // Not retried: no connection stays open, and no new connect request comes over a while
    // (the client would otherwise reconnect every ~200 ms).
    const requests = (await mntr(port)).zk_connection_request_count;
    await eventually('the refused connection is closed', async () => {
      return (await mntr(port)).zk_num_alive_connections === idle;
    });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await mntr(port);
    expect(after.zk_connection_request_count).toBe(requests);
  });

  it('without credentials the same server serves the client (the refusal is about auth only)', async () => {
    const locks = await ZkLockClient.connect({ connectionString: server.connectionString });
    const root = testRoot('auth-failed');
    try {
      await locks.withLock(`${root}/a`, () => undefined);
    } finally {
      await locks.close();
      const admin = await ZkAdmin.connect(server.connectionString);
      await admin.removeTree(root);
      admin.close();
    }
  });
});

describe('credentials on every connection and every session', () => {
  let server: ZooKeeperServer;
  const root = testRoot('auth-sessions');
  const clients: ZkLockClient[] = [];

  /** A creator-only client whose lock path exists, and the connection states it reports. */
  const client = async (sessionTimeoutMs: number) => {
    const locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs,
      connectTimeoutMs: 30_000,
      namespace: root,
      auth: CREDENTIALS,
      acl: 'creator',
      parentCleanupDelayMs: 60_000,
    });
    clients.push(locks);
    const states: string[] = [];
    locks.on('state', (s) => states.push(s));
    await locks.withLock('/locks/a', () => undefined); // the creator-only path exists now
    return { locks, states };
  };

  printServerLogOnFailure(() => server);
  beforeAll(async () => (server = await ZooKeeperServer.start()));

  afterAll(async () => {
    server.members[0].resume();
    await Promise.allSettled(clients.map((c) => c.close()));
    await server.stop(); // this file's own server: its data goes with it
  });

  it('a new connection of the same session (server restarted) authenticates again', async () => {
    // A long session, so that it survives the restart even on a slow machine.
    const { locks, states } = await client(30_000);
    const session = locks.sessionId;
    await server.members[0].stop();
    server.members[0].start();
    await server.members[0].waitServing();
    await eventually(
      'the same session is back',
      () => states.includes('RECONNECTED'),
      scaled(30_000),
    );
    expect(locks.sessionId).toBe(session);
    // Creating a lock node under the creator-only path needs our identity on this connection.
    await locks.withLock('/locks/a', (lock) => expect(lock.state).toBe('held'), {
      waitTimeoutMs: 30_000,
    });
  });

  it('a new session after LOST authenticates again', async () => {
    const { locks, states } = await client(4_000);
    const session = locks.sessionId;
    server.members[0].pause();
    try {
      await eventually('the session is lost', () => states.includes('LOST'), scaled(30_000));
    } finally {
      server.members[0].resume();
    }
    await eventually('a new session', () => states.includes('RECONNECTED'), scaled(30_000));
    expect(locks.sessionId).not.toBe(session);
    await locks.withLock('/locks/a', (lock) => expect(lock.state).toBe('held'), {
      waitTimeoutMs: 30_000,
    });
  });
});

describe('servers that start refusing the credentials while the client runs', () => {
  let server: ZooKeeperServer;
  const root = testRoot('auth-revoked');

  printServerLogOnFailure(() => server);
  beforeAll(async () => (server = await ZooKeeperServer.start()));
  afterAll(() => server.stop());

  it('the reconnect gets AUTH_FAILED: holders lose their locks, callers get ZooKeeperAuthFailedError, no retry', async () => {
    const locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: 30_000, // the session outlives the restart even on a slow machine
      namespace: root,
      auth: CREDENTIALS,
    });
    try {
      const lock = await locks.acquire('/locks/a');
      const lost: Error[] = [];
      lock.on('lost', (error) => lost.push(error));
      // Restart the server without the digest provider (within the session timeout).
      const member = server.members[0];
      await member.stop();
      appendFileSync(
        join(member.dataDir, 'zoo.cfg'),
        'DigestAuthenticationProvider.enabled=false\n',
      );
      member.start();
      await member.waitServing();
      await eventually('the held lock is lost', () => lost.length > 0, scaled(30_000));
      expect(lost[0].message).toMatch(/refused this client's `auth` credentials \(AUTH_FAILED\)/);
      await expect(locks.acquire('/locks/b', { waitTimeoutMs: 30_000 })).rejects.toBeInstanceOf(
        ZooKeeperAuthFailedError,
      );
      // Every session of the client reconnects once and is refused: then none
      // tries again (within the 30 s session timeout, LOST only comes from the refusal).
      await eventually(
        'every session was refused',
        () => locks.sessions.every((s) => s.state === 'LOST'),
        scaled(30_000),
      );
      const port = member.clientPort;
      const requests = (await mntr(port)).zk_connection_request_count;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect((await mntr(port)).zk_connection_request_count).toBe(requests);
    } finally {
      await locks.close();
    }
  });
});
