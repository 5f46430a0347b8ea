/**
 * Faults found in review: each test names the behaviour that once failed. Runs its own
 * ZooKeeper server, so freezing it (SIGSTOP) affects no other test file; the other process is a
 * lock-agent.
 */
import {
  ClientClosedError,
  ConnectionState,
  LockHandle,
  LockLostError,
  ZkLockError,
} from '../../lib';
import { useOwnServer } from './support/own-server';
import { eventually } from './support/zk-admin';

/** Expires while the server is frozen for a moment (our clock declares it lost after 2 s). */
const SHORT_SESSION_MS = 2_000;
/** The clock notices a frozen server after 2/3 of it (6 s): room for short freezes. */
const OUTAGE_SESSION_MS = 9_000;
const LONG_SESSION_MS = 20_000;

describe('review: faults around release, loss and recovery', () => {
  const zk = useOwnServer('review-faults', { sessionTimeoutMs: LONG_SESSION_MS });
  const { root, connect, startAgent } = zk;
  const freezeServerUntil = zk.freezeServerUntil;

  it('leaves no orphan node when the create is in doubt and finding it again times out too', async () => {
    const path = `${root}/create-in-doubt`;
    // Requests time out long before the clock notices the frozen server (6 s).
    const locks = await connect({ sessionTimeoutMs: OUTAGE_SESSION_MS, requestTimeoutMs: 300 });
    await zk.admin.removeTree(path);
    const warm = await locks.acquire(path); // the lock path exists: one create, no mkdirp
    await warm.release();

    zk.server.members[0].pause();
    let outcome: unknown;
    try {
      outcome = await locks.acquire(path, { waitTimeoutMs: 1_500 }).then(
        (lock) => lock,
        (err: unknown) => err,
      );
    } finally {
      zk.server.members[0].resume();
    }
    // The waiter gives up with one of ours, not with a raw ZooKeeper request error.
    expect(outcome).toBeInstanceOf(ZkLockError);
    // The server now applies the create it had received: that node must not stay behind, or it
    // would hold the lock for as long as our session lives.
    await zk.expectFreeForOthers(path);
  });

  it('fails a re-entry into a lock its scope lost, instead of waiting for itself', async () => {
    const path = `${root}/reenter-lost`;
    const locks = await connect({ sessionTimeoutMs: SHORT_SESSION_MS });
    let outer!: LockHandle;
    const inner = await locks.withLock(path, async (lock) => {
      outer = lock;
      await freezeServerUntil('the lock is lost', () => lock.state === 'lost');
      // E.g. a @DistributedLock service method on the same path, called after the loss. The
      // scope still holds the lost lock (its place in this process), so waiting would be for
      // itself: forever without a waitTimeoutMs.
      return locks
        .withLock(path, () => 'entered', { waitTimeoutMs: 5_000 })
        .catch((err: unknown) => err);
    });
    expect(inner).toBeInstanceOf(LockLostError);
    expect((inner as LockLostError).path).toBe(path);
    expect((inner as LockLostError).message).toContain(path);
    expect(outer.state).toBe('lost');
    // Once the owner has let go, the path can be locked again.
    const again = await locks.acquire(path, { waitTimeoutMs: 10_000 });
    expect(again.fencingToken).toBeGreaterThan(outer.fencingToken);
    await again.release();
  });

  it('removes an idle lock path once ZooKeeper is back when the cleanup ran into an outage', async () => {
    const path = `${root}/cleanup-outage/lock`;
    const locks = await connect({
      sessionTimeoutMs: OUTAGE_SESSION_MS,
      requestTimeoutMs: 300,
      parentCleanupDelayMs: 1_000,
    });
    const states: ConnectionState[] = [];
    locks.on('state', (state: ConnectionState) => states.push(state));
    const lock = await locks.acquire(path);
    await lock.release();
    expect(await zk.admin.exists(path)).toBe(true);

    // The cleanup is due 1 to 2 s after the release: the server is frozen by then, and stays
    // frozen until the client notices (6 s), so the removal fails or is skipped.
    await freezeServerUntil('the session is suspended', () => states.includes('SUSPENDED'));
    await eventually('the same session is back', () => states.includes('RECONNECTED'));
    await eventually('the lock path and the parent we created are gone', async () => {
      return !(await zk.admin.exists(`${root}/cleanup-outage`));
    });
  });

  it('inspect() on a closed client fails with ClientClosedError, not as an unreachable server', async () => {
    const path = `${root}/inspect-closed`;
    const locks = await connect();
    await locks.close();
    const error = await locks.inspect(path).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ClientClosedError);
    expect((error as ClientClosedError).message).toContain(`inspect "${path}"`);
    expect((error as ClientClosedError).message).toContain('ZkLockClient.connect()');
  });

  it('does not hand the lock on in process on a node another client deleted', async () => {
    const path = `${root}/handoff-deleted`;
    const agent = await startAgent();
    const locks = await connect();
    // One tick: one node for both; nobody reads the first holder's signal.
    const [first, second] = [0, 1].map(() => locks.acquire(path));
    let localHolds = false;
    let remoteHolds = false;
    void second.then(
      () => (localHolds = true),
      () => undefined,
    );
    const lock0 = await first;
    const [ours] = await zk.admin.children(path);
    await zk.admin.removeTree(`${path}/${ours}`);
    // The node will serve another caller, so it watches itself from its first holder on.
    await eventually('our holder learns its node is gone', () => lock0.state === 'lost');
    // Our node is gone: a remote process may take the lock now.
    const remote = agent.acquire(path).then((token) => {
      remoteHolds = true;
      return token;
    });
    await lock0.release();

    // Whoever gets the lock first, the other must still be waiting (a node of its own queued).
    await eventually('someone holds the lock', () => localHolds || remoteHolds);
    const winner = localHolds ? 'local' : 'remote';
    await eventually('the other holds too, or waits on a node', async () => {
      return (localHolds && remoteHolds) || (await zk.admin.children(path)).length === 2;
    });
    expect({ localHolds, remoteHolds }).toEqual({
      localHolds: winner === 'local',
      remoteHolds: winner === 'remote',
    });

    if (winner === 'remote') await agent.release(path);
    const lock1 = await second;
    expect(lock1.state).toBe('held');
    expect(lock1.fencingToken).toBeGreaterThan(lock0.fencingToken + 1n); // a new node
    await lock1.release();
    const remoteToken = await remote;
    if (winner === 'local') {
      expect(remoteToken).toBeGreaterThan(lock1.fencingToken);
      await agent.release(path);
    } else {
      expect(lock1.fencingToken).toBeGreaterThan(remoteToken);
    }
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });
});
