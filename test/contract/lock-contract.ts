/**
 * One contract for the lock engine, run against a real ZooKeeper
 * (zookeeper.contract.e2e-spec.ts) and against the in-memory ZooKeeper that
 * `ZkLockTestingModule.forRoot()` uses (in-memory.contract.spec.ts), so the two cannot drift apart:
 * what a user's unit test sees without ZooKeeper is what production does.
 */
import { randomBytes } from 'node:crypto';
import {
  LockAbortedError,
  LockHandle,
  LockModeError,
  LockTimeoutError,
  ZkLockClient,
  type ZkLockClientOptions,
} from '../../lib';
import { CONTAINER } from '../../lib/core/zookeeper/jute';
import { CreateMode } from '../../lib/core/zookeeper/zk-client';
import { ZkCode } from '../../lib/core/zookeeper/zk-errors';
import { ZkSession } from '../../lib/core/zookeeper/zk-session';

/** The digest credentials of the contract's `acl: 'creator'` client (its nodes need them). */
export const CONTRACT_AUTH = 'contract:s3cret';

export interface ContractBackend {
  /** Connection string of the ZooKeeper (real or in memory) the clients use. */
  connectionString(): string;
  /** The clients' option `sessions` (default 1). */
  sessions?: number;
  /** Whether the node `path` exists on the server. */
  exists(path: string): Promise<boolean>;
  /** Removes what a test left under its namespace, and the namespace (which nothing removes). */
  removeNamespace?(namespace: string): Promise<void>;
}

export function describeLockContract(name: string, backend: () => ContractBackend): void {
  describe(`lock engine contract (${name})`, () => {
    const clients: ZkLockClient[] = [];
    let namespace: string;

    /** A client with a session of its own (another instance of the app). */
    const client = async (options: Partial<ZkLockClientOptions> = {}): Promise<ZkLockClient> => {
      const c = await ZkLockClient.connect({
        connectionString: backend().connectionString(),
        namespace,
        parentCleanupDelayMs: 100,
        sessions: backend().sessions,
        ...options,
      });
      clients.push(c);
      return c;
    };

    beforeEach(() => {
      namespace = `/contract-${randomBytes(4).toString('hex')}`;
    });

    afterEach(async () => {
      await Promise.allSettled(clients.splice(0).map((c) => c.close()));
      await backend().removeNamespace?.(namespace);
    });

    /** Resolves once `path` has `count` nodes waiting behind its holder. */
    const queued = async (by: ZkLockClient, path: string, count: number): Promise<void> => {
      while ((await by.inspect(path)).queue.length < count) {
        await new Promise((r) => setTimeout(r, 10));
      }
    };

    it('serves waiters of different instances in the order they queued (FIFO), tokens growing', async () => {
      const [a, b, c, d] = [await client(), await client(), await client(), await client()];
      const held = await a.acquire('/fifo');
      const order: string[] = [];
      const tokens: bigint[] = [held.fencingToken];
      const take = (who: string, by: ZkLockClient) =>
        by.withLock('/fifo', (lock) => {
          order.push(who);
          tokens.push(lock.fencingToken);
        });
      const bDone = take('b', b);
      await queued(a, '/fifo', 1);
      const cDone = take('c', c);
      await queued(a, '/fifo', 2);
      const dDone = take('d', d);
      await queued(a, '/fifo', 3);
      await held.release();
      await Promise.all([bDone, cDone, dDone]);
      expect(order).toEqual(['b', 'c', 'd']);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    });

    it('re-enters in the same async scope without waiting, and only there', async () => {
      const a = await client();
      await a.withLock('/reentrant', async (outer) => {
        const inner = await a.acquire('/reentrant', { waitTimeoutMs: 0 });
        expect(inner.fencingToken).toBe(outer.fencingToken);
        expect(a.isHeld('/reentrant')).toBe(true);
        await inner.release();
        expect(outer.state).toBe('held');
      });
      expect(a.isHeld('/reentrant')).toBe(false);
      // A sibling task of the holder does not re-enter: it waits like anyone else.
      const holder = await a.acquire('/reentrant');
      await expect(a.acquire('/reentrant', { waitTimeoutMs: 50 })).rejects.toBeInstanceOf(
        LockTimeoutError,
      );
      await holder.release();
    });

    it('times out with LockTimeoutError naming the path; tries once with waitTimeoutMs 0 and tryAcquire', async () => {
      const [a, b] = [await client(), await client()];
      const held = await a.acquire('/busy');
      const timedOut = await b.acquire('/busy', { waitTimeoutMs: 100 }).catch((e: Error) => e);
      expect(timedOut).toBeInstanceOf(LockTimeoutError);
      expect((timedOut as LockTimeoutError).path).toBe('/busy');
      await expect(b.acquire('/busy', { waitTimeoutMs: 0 })).rejects.toBeInstanceOf(
        LockTimeoutError,
      );
      expect(await b.tryAcquire('/busy')).toBeNull();
      await held.release();
      const free = await b.tryAcquire('/busy');
      expect(free).not.toBeNull();
      await free!.release();
    });

    it('stops waiting with LockAbortedError when the signal aborts', async () => {
      const [a, b] = [await client(), await client()];
      const held = await a.acquire('/abort');
      const controller = new AbortController();
      const waiting = b.acquire('/abort', { signal: controller.signal });
      await queued(a, '/abort', 1);
      controller.abort();
      await expect(waiting).rejects.toBeInstanceOf(LockAbortedError);
      await held.release();
      const next = await b.acquire('/abort', { waitTimeoutMs: 5_000 });
      await next.release();
    });

    it('release() is idempotent and the handle tells its state', async () => {
      const a = await client();
      const lock = await a.acquire('/release');
      expect(lock.state).toBe('held');
      await lock.release();
      await lock.release();
      expect(lock.state).toBe('released');
      expect(lock.signal.aborted).toBe(false);
    });

    it('lets readers share and makes a writer wait; downgrade works, upgrade fails at once', async () => {
      const [a, b] = [await client(), await client()];
      const r1 = await a.readLock('/rw').acquire();
      const r2 = await b.readLock('/rw').acquire({ waitTimeoutMs: 1_000 });
      await expect(b.writeLock('/rw').acquire({ waitTimeoutMs: 100 })).rejects.toBeInstanceOf(
        LockTimeoutError,
      );
      await Promise.all([r1.release(), r2.release()]);
      await a.writeLock('/rw').withLock(async () => {
        const read = await a.readLock('/rw').acquire({ waitTimeoutMs: 0 }); // downgrade
        await read.release();
      });
      const upgrade = await a
        .readLock('/rw')
        .withLock(() => a.writeLock('/rw').acquire({ waitTimeoutMs: 1_000 }))
        .catch((e: Error) => e);
      expect(upgrade).toBeInstanceOf(LockModeError);
    });

    it('never gives a semaphore more than maxLeases holders', async () => {
      const [a, b] = [await client(), await client()];
      const first = await a.semaphore('/sem', { maxLeases: 2 }).acquire();
      const second = await b.semaphore('/sem', { maxLeases: 2 }).acquire();
      await expect(
        a.semaphore('/sem', { maxLeases: 2 }).acquire({ waitTimeoutMs: 100 }),
      ).rejects.toBeInstanceOf(LockTimeoutError);
      await first.release();
      const third = await a.semaphore('/sem', { maxLeases: 2 }).acquire({ waitTimeoutMs: 5_000 });
      await Promise.all([second.release(), third.release()]);
    });

    it('refuses a second maxLeases on a semaphore path, in one client and across clients', async () => {
      const [a, b] = [await client(), await client()];
      const held = await a.semaphore('/sem-limit', { maxLeases: 1 }).acquire();
      for (const other of [a, b]) {
        const error = await other
          .semaphore('/sem-limit', { maxLeases: 2 })
          .acquire({ waitTimeoutMs: 5_000 })
          .catch((e: Error) => e);
        expect(error).toBeInstanceOf(LockModeError);
        expect((error as Error).message).toMatch(/maxLeases 1 .*maxLeases 2/);
      }
      await held.release();
    });

    it('the server removes an emptied lock path (a container), the namespace stays', async () => {
      const a = await client({ parentCleanupDelayMs: 10 * 60_000 }); // its own cleanup stays off
      await a.withLock('/emptied/order-1', () => undefined);
      const gone = async (path: string): Promise<void> => {
        while (await backend().exists(path)) await new Promise((r) => setTimeout(r, 50));
      };
      await gone(`${namespace}/emptied/order-1`);
      await gone(`${namespace}/emptied`);
      expect(await backend().exists(namespace)).toBe(true);
    });

    it('makes a node with its parents in one transaction: all or none', async () => {
      const session = new ZkSession({
        connectionString: backend().connectionString(),
        sessionTimeoutMs: 10_000,
        requestTimeoutMs: 5_000,
      });
      session.start();
      const container = (path: string) => ({ path, data: null, mode: CONTAINER });
      const ephemeral = (path: string) => [path, null, CreateMode.EPHEMERAL] as const;
      try {
        await session.whenUsable();
        await session.create(namespace, null, CreateMode.PERSISTENT);
        const [a, b, c] = [`${namespace}/a`, `${namespace}/a/b`, `${namespace}/a/c`];
        // `a` is missing: NONODE, nothing made.
        const noParent = session.createWithParents([container(b)], ...ephemeral(`${b}/n`));
        await expect(noParent).rejects.toMatchObject({ code: ZkCode.NO_NODE });
        expect(await backend().exists(b)).toBe(false);
        // From `a` down: every node, the last one's path answered.
        const made = await session.createWithParents(
          [container(a), container(b)],
          ...ephemeral(`${b}/n`),
        );
        expect(made).toBe(`${b}/n`);
        expect(await backend().exists(`${b}/n`)).toBe(true);
        // `b` exists: NODEEXISTS, and neither `c` before it nor the node after it is made.
        const clash = session.createWithParents(
          [container(c), container(b)],
          ...ephemeral(`${b}/m`),
        );
        await expect(clash).rejects.toMatchObject({ code: ZkCode.NODE_EXISTS });
        expect(await backend().exists(c)).toBe(false);
        expect(await backend().exists(`${b}/m`)).toBe(false);
      } finally {
        await session.close();
      }
    });

    it('makes a node with its parents under a chroot: paths sent under it, answered without it', async () => {
      const open = (chroot: string): ZkSession => {
        const session = new ZkSession({
          connectionString: `${backend().connectionString()}${chroot}`,
          sessionTimeoutMs: 10_000,
          requestTimeoutMs: 5_000,
        });
        session.start();
        return session;
      };
      const plain = open('');
      const chrooted = open(namespace);
      const container = (path: string) => ({ path, data: null, mode: CONTAINER });
      try {
        await plain.whenUsable();
        await plain.create(namespace, null, CreateMode.PERSISTENT);
        await chrooted.whenUsable();
        const made = await chrooted.createWithParents(
          [container('/a')],
          '/a/n-',
          null,
          CreateMode.EPHEMERAL_SEQUENTIAL,
        );
        expect(made).toBe('/a/n-0000000000');
        expect(await backend().exists(`${namespace}/a/n-0000000000`)).toBe(true);
        // `/b` is missing under the chroot: NONODE, nothing made.
        const noParent = chrooted.createWithParents([container('/b/c')], '/b/c/n', null, 0);
        await expect(noParent).rejects.toMatchObject({ code: ZkCode.NO_NODE });
        expect(await backend().exists(`${namespace}/b`)).toBe(false);
      } finally {
        await Promise.all([chrooted.close(), plain.close()]);
      }
    });

    it("acl 'creator' with auth: the lock path's ACL is this client's own", async () => {
      const a = await client({ auth: CONTRACT_AUTH, acl: 'creator' });
      await a.withLock('/creator', () => undefined);
      await a.withLock('/creator', () => undefined);
    });

    it('takes several paths all or nothing', async () => {
      const [a, b] = [await client(), await client()];
      const held: LockHandle = await b.acquire('/multi/b');
      await expect(
        a.acquireAll(['/multi/a', '/multi/b'], { waitTimeoutMs: 100 }),
      ).rejects.toBeInstanceOf(LockTimeoutError);
      expect(a.isHeld('/multi/a')).toBe(false);
      const freeA = await b.tryAcquire('/multi/a'); // nothing of the failed try is held
      expect(freeA).not.toBeNull();
      await freeA!.release();
      await held.release();
      const both = await a.acquireAll(['/multi/b', '/multi/a'], { waitTimeoutMs: 5_000 });
      expect(both.locks).toHaveLength(2);
      await both.release();
    });
  });
}
