/**
 * A create whose reply is lost, recovered from a listing that does not show
 * it yet (on an ensemble, a member that has not applied the create), is created a second time.
 * The first node has our uuid, a lower sequence, and lives as long as our session: unless every
 * listing deletes other nodes with our uuid, we wait behind our own node, and so does everyone.
 *
 * The same node is left behind when the waiter gives up while that recovery runs: the recovery
 * finds nothing, and a contender that stops there never learns of the node when it shows up.
 *
 * The fault is injected at the adapter boundary of the client under test: its first create is
 * sent for real but answered with CONNECTION_LOSS, and the recovery listing leaves that node out
 * (optionally answered only once the test lets it, as a lagging member's late answer).
 */
import { LockAbortedError, ZkLockClient } from '../../lib';
import { ZkCode, ZkRequestError } from '../../lib/core/zookeeper/zk-errors';
import type { ZkSession } from '../../lib/core/zookeeper/zk-session';
import { useCoreFixture } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

/**
 * The first create succeeds on the server but its reply is "lost"; the next listing hides it.
 * With `answerRecovery`, the recovery's listing is answered only once that promise resolved.
 */
function loseFirstCreateReply(
  client: ZkLockClient,
  answerRecovery?: Promise<void>,
): () => string | undefined {
  // The client's one session (option `sessions: 1`): the pool's only member's.
  const { pool } = client as unknown as { pool: { members: { current: ZkSession }[] } };
  const session = pool.members[0].current;
  const create = session.create.bind(session);
  const getChildren = session.getChildren.bind(session);
  let lost: string | undefined;
  let listingsToHide = 0;
  session.create = async (path, data, mode) => {
    const created = await create(path, data, mode);
    if (lost) return created;
    lost = created.slice(created.lastIndexOf('/') + 1);
    listingsToHide = 2; // the listing sent with the create, and the recovery's
    throw new ZkRequestError(ZkCode.CONNECTION_LOSS, 'create', path, 'reply lost (injected)');
  };
  session.getChildren = async (path, watcher) => {
    const listing = await getChildren(path, watcher);
    if (listingsToHide === 0 || !lost) return listing;
    listingsToHide--;
    if (listingsToHide === 0) await answerRecovery; // the recovery's listing, sent after the create's
    return { ...listing, children: listing.children.filter((c) => c !== lost) };
  };
  return () => lost;
}

describe('uncertain create', () => {
  const zk = useCoreFixture('uncertain-create', { parentCleanupDelayMs: 100 });
  const clients: ZkLockClient[] = [];
  afterAll(() => Promise.all(clients.map((c) => c.close())));

  it('a second node with our uuid is deleted, not waited on, and nothing is left behind', async () => {
    const path = `${zk.root}/twice`;
    const holder = await zk.startAgent();
    await holder.acquire(path);
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessions: 1,
    });
    clients.push(client);
    const lostNode = loseFirstCreateReply(client);
    const waiting = client.acquire(path, { waitTimeoutMs: 20_000 });
    await eventually('the lost create happened', () => lostNode() !== undefined);
    await holder.release(path);
    const lock = await waiting;
    expect(await zk.admin.children(path)).toHaveLength(1); // ours, once: the duplicate is gone
    await lock.release();
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('a node of a create in doubt is deleted when its waiter gives up while the recovery runs', async () => {
    const path = `${zk.root}/gave-up`;
    const holder = await zk.startAgent();
    await holder.acquire(path);
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessions: 1,
    });
    clients.push(client);
    let answerRecovery!: () => void;
    const lostNode = loseFirstCreateReply(client, new Promise((r) => (answerRecovery = r)));
    const controller = new AbortController();
    const waiting = client.acquire(path, { signal: controller.signal }).catch((e: unknown) => e);
    await eventually('the lost create happened', () => lostNode() !== undefined);
    controller.abort(); // while the recovery's listing is still unanswered
    expect(await waiting).toBeInstanceOf(LockAbortedError);
    answerRecovery(); // without the node: the recovery finds nothing of ours
    await holder.release(path);
    // The node of the lost create is ours: it must go, or it holds the lock for our session's life.
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
    expect(await holder.send({ op: 'tryAcquire', path })).toMatchObject({
      type: 'tried',
      token: expect.any(String),
    });
    await holder.release(path);
  });
});
