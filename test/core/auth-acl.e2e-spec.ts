/**
 * Issue #13 §3: `auth` (digest credentials) and `acl: 'creator'` against real servers. With
 * creator-only ACLs nobody else (no credentials, or a wrong password) can delete or change our
 * lock nodes or take the lock; servers that refuse the credentials (AUTH_FAILED) end the client
 * with ZooKeeperAuthFailedError and no retry; credentials are sent again on every connection.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  InvalidLockOptionsError,
  LockAccessDeniedError,
  ZkLockClient,
  ZooKeeperAuthFailedError,
} from '../../lib';
import { mntr, ZooKeeperServer } from '../support/zookeeper';
import { LockAgent } from './support/agents';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from './support/zk-admin';

const CREDENTIALS = 'orders-app:s3cret-Pa55';
const WRONG = 'orders-app:not-the-password';
const NO_AUTH = -102;
const ALL = 31;
/** The ACL entry ZooKeeper stores for `auth` of CREATOR_ALL_ACL with these credentials. */
const digestId = (credentials: string): string =>
  `digest:${credentials.split(':')[0]}:${createHash('sha1').update(credentials).digest('base64')}`;

const codeOf = async (promise: Promise<unknown>): Promise<number | string> =>
  promise.then(
    () => 'succeeded',
    (err) => err.getCode?.() ?? err.name,
  );

describe("acl: 'creator' with auth", () => {
  const root = testRoot('acl-creator');
  const path = '/locks/order:42';
  const lockPath = `${root}${path}`;
  let locks: ZkLockClient;
  let owner: ZkAdmin; // same credentials: sees and cleans up our nodes
  let anonymous: ZkAdmin;
  const agents: LockAgent[] = [];
  const agent = async (options: object): Promise<LockAgent> => {
    const started = await LockAgent.start({ namespace: root, ...options });
    agents.push(started);
    return started;
  };

  beforeAll(async () => {
    locks = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace: root,
      auth: CREDENTIALS,
      acl: 'creator',
      parentCleanupDelayMs: 60_000,
    });
    owner = await ZkAdmin.connect(zkConnectFromEnv(), 15_000, [CREDENTIALS]);
    anonymous = await ZkAdmin.connect(zkConnectFromEnv());
  });

  afterAll(async () => {
    await Promise.allSettled(agents.map((a) => a.close()));
    await locks.close();
    await owner.removeTree(root);
    owner.close();
    anonymous.close();
  });

  it('creates every node (namespace, lock path, lock node) with CREATOR_ALL_ACL for its identity', async () => {
    const lock = await locks.acquire(path);
    try {
      const [node] = await owner.children(lockPath);
      for (const p of [root, `${root}/locks`, lockPath, `${lockPath}/${node}`]) {
        expect(await owner.acl(p)).toEqual([{ id: digestId(CREDENTIALS), permission: ALL }]);
      }
    } finally {
      await lock.release();
    }
  });

  it('read/write and semaphore nodes get the same ACL', async () => {
    const all = [{ id: digestId(CREDENTIALS), permission: ALL }];
    await locks.writeLock('/rw').withLock(async () => {
      const [node] = await owner.children(`${root}/rw`);
      expect(await owner.acl(`${root}/rw/${node}`)).toEqual(all);
    });
    await locks.semaphore('/sem', { maxLeases: 2 }).withLease(async () => {
      const [lease] = await owner.children(`${root}/sem/leases`);
      for (const p of [`${root}/sem`, `${root}/sem/locks`, `${root}/sem/leases/${lease}`]) {
        expect(await owner.acl(p)).toEqual(all);
      }
    });
  });

  it('a client without credentials cannot delete or change our lock nodes, so it cannot steal the lock', async () => {
    const lock = await locks.acquire(path);
    try {
      const [node] = await owner.children(lockPath);
      const nodePath = `${lockPath}/${node}`;
      expect(await codeOf(anonymous.remove(nodePath))).toBe(NO_AUTH);
      expect(await codeOf(anonymous.setData(nodePath, 'mine now'))).toBe(NO_AUTH);
      expect(await codeOf(anonymous.create(`${lockPath}/_c_x-lock-`, '', 'sequential'))).toBe(
        NO_AUTH,
      );
      expect(await codeOf(anonymous.getData(nodePath))).toBe(NO_AUTH);
      expect(await codeOf(anonymous.children(lockPath))).toBe(NO_AUTH);
      // Another process without credentials: a clear, documented error, no waiting.
      const intruder = await agent({});
      for (const op of ['acquire', 'tryAcquire'] as const) {
        const reply = await intruder.send({ op, path });
        expect(reply).toMatchObject({ type: 'error', name: 'LockAccessDeniedError' });
        expect((reply as { message: string }).message).toContain(`"${lockPath}"`);
        expect((reply as { message: string }).message).toMatch(/NOAUTH.*`auth` credentials/);
      }
      expect(await owner.children(lockPath)).toEqual([node]);
      expect(lock.state).toBe('held');
      expect(lock.signal.aborted).toBe(false);
    } finally {
      await lock.release();
    }
  });

  it('a client with a wrong password gets LockAccessDeniedError (never its password in it)', async () => {
    const lock = await locks.acquire(path);
    try {
      const intruder = await agent({ auth: WRONG });
      const reply = await intruder.send({ op: 'acquire', path, waitTimeoutMs: 30_000 });
      expect(reply).toMatchObject({ type: 'error', name: 'LockAccessDeniedError' });
      expect(JSON.stringify(reply)).not.toContain('not-the-password');
      expect(lock.state).toBe('held');
    } finally {
      await lock.release();
    }
    // In this process too: the documented class, before any wait.
    const wrong = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace: root,
      auth: WRONG,
    });
    try {
      await expect(wrong.acquire(path)).rejects.toBeInstanceOf(LockAccessDeniedError);
      await expect(wrong.inspect(path)).rejects.toBeInstanceOf(LockAccessDeniedError);
    } finally {
      await wrong.close();
    }
  });

  it('a client with the same credentials, in another process, excludes with us as usual', async () => {
    const lock = await locks.acquire(path);
    const peer = await agent({ auth: CREDENTIALS, acl: 'creator' });
    expect(await peer.send({ op: 'tryAcquire', path })).toMatchObject({
      type: 'tried',
      token: null,
    });
    const waiting = peer.send({ op: 'acquire', path, waitTimeoutMs: 30_000 });
    await lock.release();
    expect(await waiting).toMatchObject({ type: 'acquired' });
    await peer.release(path);
  });

  it('several credentials: every identity gets the ACL entry', async () => {
    const both = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace: root,
      auth: [CREDENTIALS, 'ops:another-one'],
      acl: 'creator',
    });
    try {
      await both.withLock('/locks/two-identities', async () => {
        const acl = await owner.acl(`${root}/locks/two-identities`);
        expect(acl).toEqual(
          expect.arrayContaining([
            { id: digestId(CREDENTIALS), permission: ALL },
            { id: digestId('ops:another-one'), permission: ALL },
          ]),
        );
      });
    } finally {
      await both.close();
    }
  });

  it("rejects acl 'creator' without an identity, and malformed credentials, before connecting", async () => {
    const connect = (options: object) =>
      ZkLockClient.connect({ connectionString: '127.0.0.1:1', ...options });
    await expect(connect({ acl: 'creator' })).rejects.toThrow(InvalidLockOptionsError);
    await expect(connect({ acl: 'creator' })).rejects.toThrow(/needs an identity/);
    const bad = connect({ auth: [CREDENTIALS, 'no-colon-secret'] });
    await expect(bad).rejects.toThrow(
      /auth entry 2 of 2 is not digest credentials "user:password"/,
    );
    await expect(connect({ auth: 'no-colon-secret' })).rejects.not.toThrow(/no-colon-secret/);
    await expect(connect({ acl: 'everyone' })).rejects.toThrow(/acl must be 'open' or 'creator'/);
  });
});

describe('servers that refuse the credentials (AUTH_FAILED)', () => {
  let server: ZooKeeperServer;

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

  beforeAll(async () => (server = await ZooKeeperServer.start()));

  afterAll(async () => {
    server.members[0].resume();
    await Promise.allSettled(clients.map((c) => c.close()));
    const admin = await ZkAdmin.connect(server.connectionString, 30_000, [CREDENTIALS]);
    await admin.removeTree(root);
    admin.close();
    await server.stop();
  });

  it('a new connection of the same session (server restarted) authenticates again', async () => {
    // A long session, so that it survives the restart even on a slow machine.
    const { locks, states } = await client(30_000);
    const session = locks.sessionId;
    await server.members[0].stop();
    server.members[0].start();
    await server.members[0].waitServing();
    await eventually('the same session is back', () => states.includes('RECONNECTED'), 30_000);
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
      await eventually('the session is lost', () => states.includes('LOST'), 30_000);
    } finally {
      server.members[0].resume();
    }
    await eventually('a new session', () => states.includes('RECONNECTED'), 30_000);
    expect(locks.sessionId).not.toBe(session);
    await locks.withLock('/locks/a', (lock) => expect(lock.state).toBe('held'), {
      waitTimeoutMs: 30_000,
    });
  });
});

describe('servers that start refusing the credentials while the client runs', () => {
  let server: ZooKeeperServer;
  const root = testRoot('auth-revoked');

  beforeAll(async () => (server = await ZooKeeperServer.start()));
  afterAll(() => server.stop());

  it('the reconnect gets AUTH_FAILED: holders lose their locks, callers get ZooKeeperAuthFailedError, no retry', async () => {
    const locks = await ZkLockClient.connect({
      connectionString: server.connectionString,
      sessionTimeoutMs: 10_000,
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
      await eventually('the held lock is lost', () => lost.length > 0, 30_000);
      expect(lost[0].message).toMatch(/refused this client's `auth` credentials \(AUTH_FAILED\)/);
      await expect(locks.acquire('/locks/b', { waitTimeoutMs: 30_000 })).rejects.toBeInstanceOf(
        ZooKeeperAuthFailedError,
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
