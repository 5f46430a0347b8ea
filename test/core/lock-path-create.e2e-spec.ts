/**
 * How a lock path is made (lib/core/engine/contender.ts, ProtectedNode.send): with the lock node,
 * in one transaction, one more level up each time the server answers NONODE. A lock path the
 * server swept once it was empty (a CONTAINER node, every znode.container.checkIntervalMs) while
 * its parent stayed is made again alone; missing parents are made too, top down, as containers
 * with the lock-path marker, and the namespace persistent without it. Spies on the session's
 * creates only observe what is sent.
 */
import { vi } from 'vitest';
import { ZkLockClient } from '../../lib';
import { CreateMode } from '../../lib/core/zookeeper/zk-client';
import { CONTAINER } from '../../lib/core/zookeeper/jute';
import { LOCK_PATH_DATA } from '../../lib/core/engine/contender';
import { ZkSession } from '../../lib/core/zookeeper/zk-session';
import { codeOf, isNoNode } from '../../lib/core/zookeeper/zk-errors';
import { useTestRoot } from './support/core-fixture';
import { zkConnectFromEnv } from './support/zk-admin';

interface Sent {
  path: string;
  mode: number;
  data: string | undefined;
  /** 0 when made, else the error code (NODE_EXISTS -110, NO_NODE -101). */
  code: number;
}

describe('making a lock path', () => {
  const zk = useTestRoot('lock-path-create');
  afterEach(() => vi.restoreAllMocks());

  /** Every create of a lock path or namespace node from now on (not the lock nodes). */
  const spyOnCreates = (): Sent[] => {
    const sent: Sent[] = [];
    const withParents = ZkSession.prototype.createWithParents;
    vi.spyOn(ZkSession.prototype, 'createWithParents').mockImplementation(function (
      this: ZkSession,
      parents,
      ...node
    ) {
      const reply = withParents.call(this, parents, ...node);
      for (const { path, mode, data } of parents) {
        const entry: Sent = { path, mode, data: data?.toString(), code: 0 };
        sent.push(entry);
        reply.catch((err: unknown) => (entry.code = codeOf(err) ?? -1));
      }
      return reply;
    });
    const create = ZkSession.prototype.create;
    vi.spyOn(ZkSession.prototype, 'create').mockImplementation(function (
      this: ZkSession,
      path,
      data,
      mode,
    ) {
      const reply = create.call(this, path, data, mode);
      if (mode === CreateMode.EPHEMERAL_SEQUENTIAL) return reply;
      const entry: Sent = { path, mode, data: data?.toString(), code: 0 };
      sent.push(entry);
      reply.catch((err: unknown) => (entry.code = codeOf(err) ?? -1));
      return reply;
    });
    return sent;
  };

  const connect = (namespace: string) =>
    ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      namespace,
      parentCleanupDelayMs: 10 * 60_000, // our own cleanup stays out of it
    });

  it('makes a lock path the server swept again with its node, its parent and namespace not asked again', async () => {
    const namespace = `${zk.root}/swept/ns`;
    const locks = await connect(namespace);
    try {
      await (await locks.acquire('/orders/42')).release();
      // A child of ours keeps the parent from being swept; the lock path goes, as a sweep does.
      await zk.admin.create(`${namespace}/orders/keep`, '', 'persistent');
      await zk.admin.remove(`${namespace}/orders/42`).catch((err) => {
        if (!isNoNode(err)) throw err; // the server's sweep came first
      });
      const sent = spyOnCreates();
      await (await locks.acquire('/orders/42')).release();
      expect(sent).toEqual([
        {
          path: `${namespace}/orders/42`,
          mode: CONTAINER,
          data: LOCK_PATH_DATA.toString(),
          code: 0,
        },
      ]);
    } finally {
      await locks.close();
    }
  });

  it('makes every missing parent, top down: containers with the marker, the namespace persistent', async () => {
    const namespace = `${zk.root}/fresh/ns`;
    await zk.admin.create(`${zk.root}/fresh/keep`, '', 'persistent');
    const locks = await connect(namespace);
    try {
      const sent = spyOnCreates();
      await (await locks.acquire('/a/b')).release();
      const marker = LOCK_PATH_DATA.toString();
      expect(sent.filter((s) => s.code === 0)).toEqual([
        { path: namespace, mode: CreateMode.PERSISTENT, data: undefined, code: 0 },
        { path: `${namespace}/a`, mode: CONTAINER, data: marker, code: 0 },
        { path: `${namespace}/a/b`, mode: CONTAINER, data: marker, code: 0 },
      ]);
      expect(await zk.admin.exists(`${namespace}/a/b`)).toBe(true);
    } finally {
      await locks.close();
    }
  });
});
