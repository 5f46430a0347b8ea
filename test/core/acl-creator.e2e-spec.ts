/**
 * `auth` (digest credentials) and `acl: 'creator'` against a real server. With
 * creator-only ACLs nobody else (no credentials, or a wrong password, in other processes) can
 * read, delete or change our lock nodes or queue for the lock; every node of every recipe gets
 * the ACL; bad options fail before connecting. See auth-sessions.e2e-spec.ts for AUTH_FAILED and
 * credentials across reconnects and sessions.
 */
import { createHash } from 'node:crypto';
import {
  InvalidLockOptionsError,
  LockAbortedError,
  LockAccessDeniedError,
  ZkLockClient,
} from '../../lib';
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
    // The semaphore's mutex (`locks`) is held only while an acquirer waits for room; empty, it is
    // a container the server may sweep. So: no room (both leases taken), and a third acquirer
    // waiting, holding the mutex while the ACLs are read.
    const semaphore = locks.semaphore('/sem', { maxLeases: 2 });
    const leases = [await semaphore.acquire(), await semaphore.acquire()];
    const waiter = new AbortController();
    const waiting = semaphore.acquire({ signal: waiter.signal }).catch((err: unknown) => err);
    try {
      const held = await owner.children(`${root}/sem/leases`);
      expect(held).toHaveLength(2);
      let acls: unknown[] = [];
      await eventually('the ACLs read while the third acquirer holds the mutex', async () => {
        // A read fails while no acquirer holds the mutex (the server may sweep the `locks` node).
        try {
          const [mutex] = await owner.children(`${root}/sem/locks`);
          if (mutex === undefined) return false;
          const paths = [`${root}/sem`, `${root}/sem/locks`, `${root}/sem/locks/${mutex}`];
          for (const lease of held) paths.push(`${root}/sem/leases/${lease}`);
          acls = await Promise.all(paths.map((p) => owner.acl(p)));
          return true;
        } catch {
          return false;
        }
      });
      expect(acls).toEqual(Array(5).fill(all));
    } finally {
      waiter.abort(new Error('the test is done'));
      expect(await waiting).toBeInstanceOf(LockAbortedError);
      await Promise.all(leases.map((lease) => lease.release()));
    }
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
      // In this process too: the documented class, before any wait. While the lock is held, so
      // the lock path exists (empty, it is a container the server may sweep).
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
      expect(lock.state).toBe('held');
    } finally {
      await lock.release();
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
