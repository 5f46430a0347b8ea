/**
 * A process that locked distinct keys (per-order locks) and was killed with SIGKILL leaves no
 * lock path behind: lock paths are CONTAINER nodes, which the server deletes once empty, with no
 * process of ours alive to do it (docs/design.md "Cleanup"). The namespace stays.
 */
import { exited, nextMessage, spawnFixture } from './support/agents';
import { useTestRoot, type TestRootFixture } from './support/core-fixture';
import { eventually } from './support/zk-admin';
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
