/**
 * One client cut off from ZooKeeper by a TCP proxy while the server and the other process (a
 * lock-agent) go on:
 * - a batch hands the lock on after a reconnect only once its node is confirmed to exist (an
 *    operator may have deleted it meanwhile, and a remote process taken the lock);
 * - a holder whose session is lost, and whose handler ignores the signal, does not keep remote
 *    processes waiting: its process queues again only once that handler has released.
 */
import { useOwnServer } from './support/own-server';
import { TcpProxy } from './support/tcp-proxy';
import { eventually, settledFlag } from './support/zk-admin';
import { scaled } from '../support/time-scale';

describe('a client cut off from ZooKeeper', () => {
  const zk = useOwnServer('cut-off', { sessionTimeoutMs: 2000 });
  let proxy: TcpProxy;

  beforeEach(async () => {
    proxy = await TcpProxy.start(zk.server.members[0].clientPort);
  });
  afterEach(() => proxy.close());

  it('after a reconnect, a batch re-confirms its node before handing on', async () => {
    const path = `${zk.root}/batch`;
    const cut = await zk.connect({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: 20_000,
    });
    const remote = await zk.startAgent();
    // Two callers of one tick share one node; the first holds, and the node watches itself.
    const [first, second] = [cut.acquire(path), cut.acquire(path)];
    const firstLock = await first;
    await cut.inspect(path); // in order on the session: the self-check was answered before this
    const [node] = await zk.admin.children(path);
    proxy.block();
    await eventually('the client saw the disconnect', () => firstLock.state === 'uncertain');
    await zk.admin.removeTree(`${path}/${node}`); // an operator deletes the batch's node
    const remoteToken = await remote.acquire(path, scaled(10_000));
    await firstLock.release(); // the batch's next caller must wait for the reconnect
    const secondDone = settledFlag(second);
    proxy.unblock();
    await eventually('the cut-off client is back', () => cut.state === 'RECONNECTED');
    // Either the second caller is (wrongly) granted, or it queues a node of its own behind the remote.
    await eventually('the second caller was granted or queued again', async () => {
      return secondDone() || (await zk.admin.children(path)).length === 2;
    });
    expect(secondDone()).toBe(false); // not while the remote holds
    await remote.release(path);
    const secondLock = await second;
    expect(secondLock.fencingToken).toBeGreaterThan(remoteToken);
    await secondLock.release();
  });

  it('a self-check that timed out on a live socket is asked again before a batch hands on', async () => {
    const path = `${zk.root}/check-timed-out`;
    const GET_DATA = 4;
    const GET_CHILDREN2 = 12;
    await zk.admin.create(path, '', 'persistent');
    const cut = await zk.connect({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: 20_000,
      requestTimeoutMs: 500,
    });
    // Two callers of one tick share one node. The lock is free, so the first holds straight from
    // the listing (a node that waited had its existence confirmed while waiting, and a deletion
    // reported by a watch event: docs/design.md "A waiter's own node"). From the listing on,
    // nothing the cut-off client sends reaches the server, but its socket stays up: the
    // self-check of the batch's node is held.
    proxy.afterRequest = (op) => {
      if (op !== GET_CHILDREN2) return;
      proxy.afterRequest = undefined;
      proxy.holdRequests();
    };
    const [first, second] = [cut.acquire(path), cut.acquire(path)];
    const firstLock = await first;
    const [node] = await zk.admin.children(path);
    await zk.admin.removeTree(`${path}/${node}`); // an operator deletes the batch's node
    const remote = await zk.startAgent();
    const remoteToken = await remote.acquire(path, scaled(10_000));
    await firstLock.release();
    const secondDone = settledFlag(second);
    // The held self-check times out; then either the second caller is (wrongly) granted, or the
    // client asks the server again (a second getData, held too).
    await eventually(
      'the second caller was granted, or the node is checked again',
      () => secondDone() || proxy.heldOps.filter((op) => op === GET_DATA).length >= 2,
    );
    proxy.releaseRequests();
    await eventually('the second caller was granted or queued again', async () => {
      return secondDone() || (await zk.admin.children(path)).length === 2;
    });
    expect(secondDone()).toBe(false); // not while the remote holds
    await remote.release(path);
    const secondLock = await second;
    expect(secondLock.fencingToken).toBeGreaterThan(remoteToken);
    await secondLock.release();
  });

  it('a lost holder that ignores its signal lets remote processes in after the session timeout', async () => {
    const path = `${zk.root}/lost-holder`;
    const cut = await zk.connect({ connectionString: proxy.connectionString });
    const remote = await zk.startAgent();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let holderSignal: AbortSignal | undefined;
    const holding = cut.withLock(path, async (lock) => {
      holderSignal = lock.signal;
      await gate; // ignores the signal
    });
    await eventually('the holder is inside', () => holderSignal !== undefined);
    const waiter = cut.acquire(path); // a local caller queued behind it
    await eventually(
      'the local waiter queued',
      async () => (await zk.admin.children(path)).length === 2,
    );
    const oldSession = cut.sessionId;
    proxy.block();
    await eventually(
      'the holder was told it lost the lock',
      () => holderSignal!.aborted,
      scaled(30_000),
    );
    proxy.unblock();
    await eventually(
      'the client has a new session',
      () => cut.state !== 'LOST' && cut.sessionId !== oldSession,
      scaled(30_000),
    );
    // The handler still runs. A remote process must get the lock without waiting for it.
    let remoteToken: bigint | undefined;
    let handlerDone = false;
    void holding.then(
      () => (handlerDone = true),
      () => (handlerDone = true),
    );
    try {
      remoteToken = await remote.acquire(path, scaled(30_000));
      expect(handlerDone).toBe(false);
      expect(holderSignal!.aborted).toBe(true);
    } finally {
      if (remoteToken !== undefined) await remote.release(path);
      release();
    }
    await holding;
    const waited = await waiter;
    expect(waited.fencingToken).toBeGreaterThan(remoteToken!);
    await waited.release();
  });
});
