/**
 * A process that locked distinct keys (per-order locks) and was killed with SIGKILL leaves no
 * lock path behind: lock paths are CONTAINER nodes, which the server deletes once empty, with no
 * process of ours alive to do it (docs/design.md "Cleanup"). The namespace stays. A container
 * that never had a child the server keeps, so a new lock path is created with its lock node.
 */
import { OP } from '../../lib/core/zookeeper/jute';
import { LockAgent, exited, nextMessage, spawnFixture } from './support/agents';
import { useTestRoot, type TestRootFixture } from './support/core-fixture';
import { TcpProxy } from './support/tcp-proxy';
import { eventually, zkConnectFromEnv } from './support/zk-admin';
import { scaled } from '../support/time-scale';

/** Keys locked (and released) before the kill: enough paths to see, few enough to wait for. */
const KEYS = 200;
const SESSION_TIMEOUT_MS = 2_000;

describe('a process killed with SIGKILL after locking distinct keys', () => {
  const zk: TestRootFixture = useTestRoot('crash-leftovers');

  it('leaves no lock path behind once the server removed the emptied containers', async () => {
    const worker = spawnFixture('distinct-keys-worker', {
      NAMESPACE: zk.root,
      SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      CLEANUP_DELAY_MS: String(10 * 60_000), // its own cleanup never runs before the kill
    });
    await nextMessage<{ type: string; count: number }>(worker, (m) => m.count >= KEYS);
    worker.kill('SIGKILL');
    expect(await exited(worker)).toBe('SIGKILL');
    // Left at the kill: the held lock's path and node, and the released keys' paths the server
    // has not removed yet (all of them, were they persistent nodes).
    expect(await zk.admin.countDescendants(`${zk.root}/held`)).toBe(2);
    expect(await zk.admin.exists(`${zk.root}/keys`)).toBe(true);

    // The held node goes with the session (SESSION_TIMEOUT_MS), then every emptied container:
    // with ZooKeeper's default check interval (60 s) too, if ZK_CONNECT names such a server.
    await eventually(
      'every lock path of the killed process is gone',
      async () => (await zk.admin.countDescendants(zk.root)) === 0,
      scaled(75_000),
    );
    expect(await zk.admin.exists(zk.root)).toBe(true); // the namespace is not a lock path
  });
});

describe('a process killed as its first write to a new lock path reached the server', () => {
  const zk: TestRootFixture = useTestRoot('crash-new-path');

  it('leaves no lock path behind once the server removed the emptied containers', async () => {
    const proxy = await TcpProxy.start(Number(zkConnectFromEnv().split(':').pop()));
    try {
      await zk.admin.create(`${zk.root}/keys/order-0`, '', 'persistent');
      const agent = await LockAgent.start({
        connectionString: proxy.connectionString,
        namespace: zk.root,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
      });
      // The first request that creates the lock path reaches the server, none after it: the
      // process dies there, with whatever that request created.
      const created = new Promise<void>((resolve) => {
        proxy.afterRequest = (op) => {
          if (op !== OP.CREATE_CONTAINER && op !== OP.MULTI) return;
          proxy.holdRequests();
          resolve();
        };
      });
      void agent.send({ op: 'acquire', path: '/keys/order-1' }).catch(() => undefined);
      await created;
      await eventually('the lock path exists', () => zk.admin.exists(`${zk.root}/keys/order-1`));
      agent.child.kill('SIGKILL');
      expect(await exited(agent.child)).toBe('SIGKILL');

      await eventually(
        'the lock path is gone',
        async () => !(await zk.admin.exists(`${zk.root}/keys/order-1`)),
        scaled(30_000),
      );
    } finally {
      await proxy.close();
    }
  });
});
