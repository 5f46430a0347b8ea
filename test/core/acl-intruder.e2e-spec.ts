/**
 * `acl: 'creator'` against a client without credentials that takes over the nodes cleanup
 * leaves open to it: the namespace, once cleanup removed it, and a lock path it creates itself
 * with an open ACL (docs/guides/security.md, "Preparing a namespace"). The library never removes
 * the namespace, and never puts a node in a lock path whose ACL lets other identities in.
 */
import { LockAccessDeniedError, ZkLockClient } from '../../lib';
import { eventually, testRoot, ZkAdmin, zkConnectFromEnv } from './support/zk-admin';

const CREDENTIALS = 'orders-app:s3cret-Pa55';
const NO_AUTH = -102;

const codeOf = async (promise: Promise<unknown>): Promise<number | string> =>
  promise.then(
    () => 'succeeded',
    (err) => err.getCode?.() ?? err.name,
  );

interface ReaperInternals {
  due: Map<string, number>;
  inflight: Set<unknown>;
}
/** Nothing scheduled or under way: the client's cleanup has done all it will do. */
const cleanupQuiet = (client: ZkLockClient): boolean => {
  const reaper = (client as unknown as { reaper: ReaperInternals }).reaper;
  return reaper.due.size === 0 && reaper.inflight.size === 0;
};

describe("acl: 'creator' against a client without credentials", () => {
  const roots: string[] = [];
  const clients: ZkLockClient[] = [];
  let owner: ZkAdmin;
  let anonymous: ZkAdmin;

  const connect = async (namespace: string): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace,
      auth: CREDENTIALS,
      acl: 'creator',
      parentCleanupDelayMs: 50,
    });
    clients.push(client);
    return client;
  };
  const root = (name: string): string => {
    const path = testRoot(`acl-intruder-${name}`);
    roots.push(path);
    return path;
  };

  beforeAll(async () => {
    owner = await ZkAdmin.connect(zkConnectFromEnv(), undefined, [CREDENTIALS]);
    anonymous = await ZkAdmin.connect(zkConnectFromEnv());
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    for (const path of roots) await owner.removeTree(path);
    owner.close();
    anonymous.close();
  });

  it('cleanup never removes the namespace, so nobody without the credentials can create a lock path in it', async () => {
    const namespace = root('namespace');
    const locks = await connect(namespace);
    await locks.withLock('/locks/order:42', async () => undefined);
    await eventually('the idle lock path is removed', async () => {
      return !(await owner.exists(`${namespace}/locks/order:42`));
    });
    await eventually("the client's cleanup is done", () => cleanupQuiet(locks));

    expect(await owner.exists(namespace)).toBe(true);
    expect(await codeOf(anonymous.create(`${namespace}/locks`, '', 'persistent'))).toBe(NO_AUTH);
    // The namespace carries the configured ACL and no marker: cleanup leaves it to its owner.
    expect((await owner.acl(namespace)).map((a) => a.id)).toEqual([
      expect.stringMatching(/^digest:orders-app:/),
    ]);
  });

  it('refuses a lock path whose ACL lets other identities in, and leaves no node in it', async () => {
    const namespace = root('open-path');
    const lockPath = `${namespace}/locks/order:42`;
    await anonymous.create(lockPath, '', 'persistent'); // world:anyone, all permissions
    const locks = await connect(namespace);

    const failure = await locks.acquire('/locks/order:42').then(
      () => new Error('acquired a lock in a path everyone may change'),
      (err: Error) => err,
    );
    expect(failure).toBeInstanceOf(LockAccessDeniedError);
    expect(failure).toMatchObject({ name: 'UnexpectedAclError', path: lockPath });
    expect(failure.message).toContain(`"${lockPath}"`);
    expect(failure.message).toContain('world:anyone');
    expect(failure.message).toContain('digest:orders-app');
    expect(failure.message).not.toContain('s3cret');
    await expect(locks.tryAcquire('/locks/order:42')).rejects.toMatchObject({
      name: 'UnexpectedAclError',
    });
    // Nothing of ours for the intruder to list or delete.
    expect(await anonymous.children(lockPath)).toEqual([]);
  });

  it('refuses the semaphore and the election in an open path too', async () => {
    const namespace = root('open-recipes');
    // Only the leases node: the semaphore's mutex (`sem/locks`) is ours, its lease is refused.
    await anonymous.create(`${namespace}/sem/leases`, '', 'persistent');
    await anonymous.create(`${namespace}/election`, '', 'persistent');
    const locks = await connect(namespace);

    const lease = locks.semaphore('/sem', { maxLeases: 2 }).acquire();
    await expect(lease).rejects.toMatchObject({ name: 'UnexpectedAclError' });
    const latch = locks.election('/election');
    await expect(latch.start()).rejects.toMatchObject({ name: 'UnexpectedAclError' });
    await latch.close();
    await expect(lease).rejects.toMatchObject({ path: `${namespace}/sem/leases` });
    for (const dir of ['sem/leases', 'sem/locks', 'election']) {
      expect(await owner.children(`${namespace}/${dir}`)).toEqual([]);
    }
  });
});
