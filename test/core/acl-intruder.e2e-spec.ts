/**
 * `acl: 'creator'` against a client without credentials that takes over the nodes cleanup
 * leaves open to it: the namespace, once cleanup removed it, and a lock path it creates itself
 * with an open ACL (docs/guides/security.md, "Preparing a namespace"). The library never removes
 * the namespace (whatever its data), never puts a node in a lock path whose ACL lets other
 * identities in, and warns at connect of a namespace open to other identities or refusing ours.
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

  /** What connect() warned of about the namespace (not the auth-without-tls one), by namespace. */
  const warnings = new Map<string, string[]>();
  const connect = async (namespace: string): Promise<ZkLockClient> => {
    warnings.set(namespace, []);
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace,
      auth: CREDENTIALS,
      acl: 'creator',
      parentCleanupDelayMs: 50,
      onWarning: (message) => {
        if (message.includes('namespace')) warnings.get(namespace)?.push(message);
      },
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
    expect(warnings.get(namespace)).toEqual([]); // ours: nothing to warn of
  });

  it('cleanup never removes a namespace made with the lock-path marker, as earlier releases made it', async () => {
    const namespace = root('marked-namespace');
    await owner.create(namespace, 'nestjs-zookeeper-lock', 'persistent');
    const locks = await connect(namespace);
    await locks.withLock('/order:42', async () => undefined);
    await eventually('the idle lock path is removed', async () => {
      return !(await owner.exists(`${namespace}/order:42`));
    });
    await eventually("the client's cleanup is done", () => cleanupQuiet(locks));
    expect(await owner.exists(namespace)).toBe(true);
  });

  it('warns once at connect of a namespace whose ACL grants other identities, naming it and what to do', async () => {
    const namespace = root('open-namespace');
    await anonymous.create(namespace, '', 'persistent'); // world:anyone, all permissions
    await connect(namespace);
    const [warning, ...more] = warnings.get(namespace) ?? [];
    expect(more).toEqual([]);
    expect(warning).toContain(`"${namespace}"`);
    expect(warning).toContain('world:anyone');
    expect(warning).toContain('Preparing a namespace');
    expect(warning).not.toContain('s3cret');
  });

  it('warns once at connect of a namespace that refuses this identity', async () => {
    // Its own root: only the other identity may list and remove it.
    const namespace = testRoot('acl-intruder-refusing-namespace');
    const otherCredentials = 'other-app:other-Pa55';
    // Another identity made the namespace, with acl 'creator': ours may create nothing in it.
    const other = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace,
      auth: otherCredentials,
      acl: 'creator',
      onWarning: () => undefined,
    });
    const otherAdmin = await ZkAdmin.connect(zkConnectFromEnv(), undefined, [otherCredentials]);
    try {
      await connect(namespace);
      const [warning, ...more] = warnings.get(namespace) ?? [];
      expect(more).toEqual([]);
      expect(warning).toContain(`the namespace "${namespace}" refuses this client's identity`);
      expect(warning).toContain('Preparing a namespace');
    } finally {
      await other.close();
      await otherAdmin.removeTree(namespace);
      otherAdmin.close();
    }
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
