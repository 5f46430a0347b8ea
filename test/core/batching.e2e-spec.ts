/**
 * Batching under faults: one ZooKeeper node of this process stands for a batch of local callers
 * and serves them in turn (docs/design.md "Ownership and batching inside one process"). What
 * happens to the batch when our session expires, when callers give up, when the connection drops
 * as the lock is handed on, when the client closes, and when someone deletes the shared node
 * (never handed on in process then). How batches share a lock with other processes:
 * local-handoff.e2e-spec.ts and fair-share.e2e-spec.ts.
 * Runs its own ZooKeeper server, so pausing it (SIGSTOP) affects no other test file; remote
 * holders and waiters are lock-agent processes.
 */
import {
  ClientClosedError,
  ConnectionState,
  LockAbortedError,
  LockHandle,
  LockLostError,
  LockTimeoutError,
  ZkLockClient,
} from '../../lib';
import type { LockInspection } from '../../lib/core/types';
import { useOwnServer } from './support/own-server';
import { eventually } from './support/zk-admin';

/** Expires while the server is paused for a moment (our clock declares it lost after 2 s). */
const SHORT_SESSION_MS = 2_000;
/** Noticed as an outage after 2/3 of it (6 s), so a pause ended then leaves 3 s to reconnect. */
const OUTAGE_SESSION_MS = 9_000;
/** Outlives every pause in this file. */
const LONG_SESSION_MS = 20_000;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The sequence of the node a token was issued on (its bits 32..63). */
const sequenceOf = (token: bigint): number => Number((token >> 32n) & 0xffff_ffffn);
/** The node a token was granted on: the lock node's czxid and the node's sequence. */
const nodeOf = (token: bigint): bigint => token >> 32n;

/** Who held the lock, in order, with which token; counts overlapping critical sections. */
class Turns {
  readonly order: string[] = [];
  readonly tokens: bigint[] = [];
  overlaps = 0;
  private inside = 0;

  /** Runs `work` as `who`'s critical section under `lock`. */
  async visit<T>(who: string, lock: LockHandle, work: () => Promise<T>): Promise<T> {
    if (this.inside++ > 0) this.overlaps++;
    this.order.push(who);
    this.tokens.push(lock.fencingToken);
    try {
      return await work();
    } finally {
      this.inside--;
    }
  }

  expectStrictlyIncreasingTokens(): void {
    for (let i = 1; i < this.tokens.length; i++) {
      expect(this.tokens[i]).toBeGreaterThan(this.tokens[i - 1]);
    }
  }
}

describe('a batch of callers sharing one node, under faults', () => {
  const zk = useOwnServer('batching', { sessionTimeoutMs: LONG_SESSION_MS, observer: true });
  const { root, connect, startAgent } = zk;
  const pauseServerUntil = zk.freezeServerUntil;

  const inspect = (path: string): Promise<LockInspection> => zk.observer.inspect(path);

  /** Our batch's node came and went (two child changes), the remote holder (`pid`) holds alone. */
  const expectOursCreatedThenDeleted = async (
    path: string,
    changesBefore: number,
    pid: number,
  ): Promise<void> => {
    await eventually('our node was created, then deleted', async () => {
      return (await zk.admin.childChanges(path)) === changesBefore + 2;
    });
    const { holder, queue } = await inspect(path);
    expect(holder?.data.pid).toBe(pid);
    expect(queue).toEqual([]);
  };

  /** Connection states the client reports from now on. */
  const recordStates = (client: ZkLockClient): ConnectionState[] => {
    const states: ConnectionState[] = [];
    client.on('state', (state: ConnectionState) => states.push(state));
    return states;
  };

  /** Freezes the server until `lock` is uncertain, runs `whileDown`, then resumes the server. */
  const duringOutage = async (lock: LockHandle, whileDown: () => void): Promise<void> => {
    zk.server.members[0].pause();
    try {
      await eventually(
        'the holder is uncertain',
        () => lock.state === 'uncertain',
        OUTAGE_SESSION_MS,
      );
      whileDown();
    } finally {
      zk.server.members[0].resume();
    }
  };

  it('queues a waiting batch again in a new session after ours expires, and serves it in order', async () => {
    const path = `${root}/session-expired`;
    const agent = await startAgent();
    const remoteToken = await agent.acquire(path);
    const locks = await connect({ sessionTimeoutMs: SHORT_SESSION_MS, sessions: 1 });
    const states = recordStates(locks);
    const turns = new Turns();
    const batch = [0, 1, 2].map((i) =>
      locks.withLock(path, (lock) => turns.visit(`local-${i}`, lock, tick)),
    );
    const oldSession = locks.sessionId;
    await eventually('the batch waits on one node', async () => {
      const { queue } = await inspect(path);
      return queue.length === 1 && queue[0].sessionId === oldSession;
    });

    await pauseServerUntil('our session is lost', () => states.includes('LOST'));
    await eventually('the batch waits again on one node of a new session', async () => {
      const { holder, queue } = await inspect(path);
      return (
        holder?.data.pid === agent.pid &&
        queue.length === 1 &&
        queue[0].sessionId !== oldSession &&
        queue[0].sessionId === locks.sessionId
      );
    });
    expect(turns.order).toEqual([]);

    await agent.release(path);
    await Promise.all(batch);
    expect(turns.order).toEqual(['local-0', 'local-1', 'local-2']);
    expect(turns.overlaps).toBe(0);
    expect(turns.tokens[0]).toBeGreaterThan(remoteToken);
    turns.expectStrictlyIncreasingTokens();
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('serves a batch only from a live session when the holder ahead of it releases as its session is lost', async () => {
    const path = `${root}/release-on-loss`;
    const locks = await connect({ sessionTimeoutMs: SHORT_SESSION_MS, sessions: 1 });
    const states = recordStates(locks);
    const first = await locks.acquire(path);
    // A holder that gives the lock back the moment it learns it is lost.
    first.on('lost', () => void first.release());
    const oldSession = locks.sessionId;
    const turns = new Turns();
    /** Per holder, once the old session's nodes are gone: the first node in ZooKeeper. */
    const firstNodes: ({ sequence: number; sessionId: string } | null)[] = [];
    const batch = [1, 2, 3].map((i) =>
      locks.withLock(path, (lock) =>
        turns.visit(`local-${i}`, lock, async () => {
          await eventually('the old session has no node left', async () => {
            const { holder, queue } = await inspect(path);
            return ![holder, ...queue].some((node) => node?.sessionId === oldSession);
          });
          firstNodes.push((await inspect(path)).holder);
        }),
      ),
    );
    await eventually('the batch waits on a second node', async () => {
      const { queue } = await inspect(path);
      return queue.length === 1 && queue[0].sessionId === oldSession;
    });

    await pauseServerUntil('our session is lost', () => states.includes('LOST'));
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    expect(['session-expired', 'connection-lost']).toContain(
      (first.signal.reason as LockLostError).reason,
    );

    await Promise.all(batch);
    expect(turns.order).toEqual(['local-1', 'local-2', 'local-3']);
    expect(turns.overlaps).toBe(0);
    // Each holder's node (the one its token was issued on) was first in ZooKeeper, in the
    // session the client has now: none was served on a node of the session that was gone.
    turns.tokens.forEach((token, i) => {
      expect(firstNodes[i]?.sequence).toBe(sequenceOf(token));
      expect(firstNodes[i]?.sessionId).toBe(locks.sessionId);
    });
    expect(turns.tokens[0]).toBeGreaterThan(first.fencingToken);
    turns.expectStrictlyIncreasingTokens();
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('answers a batch whose deadline passed while its node was created once it is listed, and deletes the node', async () => {
    const path = `${root}/timeout-creating`;
    const agent = await startAgent();
    const remoteToken = await agent.acquire(path);
    const locks = await connect();
    const changesBefore = await zk.admin.childChanges(path);

    // Frozen server: our create is sent, and its reply only comes after every caller's deadline.
    // The session is connected, so the deadline does not cut the create and listing off
    // (docs/design.md "Deadlines"): once listed behind the remote holder, each times out.
    zk.server.members[0].pause();
    let waits: Array<Promise<unknown>>;
    let answered = 0;
    try {
      const startedAt = Date.now();
      waits = [0, 1, 2].map(() =>
        locks
          .acquire(path, { waitTimeoutMs: 300 })
          .catch((err: unknown) => err)
          .finally(() => answered++),
      );
      await eventually('every deadline has passed', () => Date.now() - startedAt > 600);
      expect(answered).toBe(0);
    } finally {
      zk.server.members[0].resume();
    }
    for (const outcome of await Promise.all(waits)) {
      expect(outcome).toBeInstanceOf(LockTimeoutError);
      expect(outcome).toMatchObject({ waitTimeoutMs: 300 });
    }

    await expectOursCreatedThenDeleted(path, changesBefore, agent.pid);

    await agent.release(path);
    const later = await locks.acquire(path, { waitTimeoutMs: 10_000 });
    expect(later.fencingToken).toBeGreaterThan(remoteToken);
    await later.release();
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('deletes the node when every caller of its batch aborts while it is being created', async () => {
    const path = `${root}/abort-creating`;
    const agent = await startAgent();
    await agent.acquire(path);
    const locks = await connect();
    const changesBefore = await zk.admin.childChanges(path);

    // Frozen server: our create is sent, and its reply only comes after every caller gave up.
    zk.server.members[0].pause();
    let outcomes: unknown[];
    try {
      const controllers = [0, 1, 2].map(() => new AbortController());
      const waits = controllers.map((controller) =>
        locks.acquire(path, { signal: controller.signal }).catch((err: unknown) => err),
      );
      await tick(); // the batch's node is being created
      for (const controller of controllers) controller.abort(new Error('gave up'));
      outcomes = await Promise.all(waits);
    } finally {
      zk.server.members[0].resume();
    }
    for (const outcome of outcomes) expect(outcome).toBeInstanceOf(LockAbortedError);

    await expectOursCreatedThenDeleted(path, changesBefore, agent.pid);
    await agent.release(path);
  });

  it('deletes the node when every caller of its batch aborts while it waits', async () => {
    const path = `${root}/abort-waiting`;
    const agent = await startAgent();
    const remoteToken = await agent.acquire(path);
    const locks = await connect();
    const controllers = [0, 1, 2].map(() => new AbortController());
    const waits = controllers.map((controller) =>
      locks.acquire(path, { signal: controller.signal }).catch((err: unknown) => err),
    );
    await eventually('the batch waits on one node', async () => {
      const { queue } = await inspect(path);
      return queue.length === 1 && queue[0].data.pid === process.pid;
    });

    controllers.forEach((controller) => controller.abort(new Error('caller went away')));
    for (const outcome of await Promise.all(waits))
      expect(outcome).toBeInstanceOf(LockAbortedError);
    await eventually('only the remote holder node is left', async () => {
      const { holder, queue } = await inspect(path);
      return holder?.data.pid === agent.pid && queue.length === 0;
    });
    expect(await zk.admin.children(path)).toHaveLength(1);

    await agent.release(path);
    const later = await locks.acquire(path, { waitTimeoutMs: 10_000 });
    expect(later.fencingToken).toBeGreaterThan(remoteToken);
    await later.release();
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('keeps the place of a batch some of whose callers gave up, and deletes its node after the last', async () => {
    const path = `${root}/partial-give-up`;
    const [holderAgent, lateAgent] = [await startAgent(), await startAgent()];
    const holderToken = await holderAgent.acquire(path);
    const locks = await connect();
    const turns = new Turns();
    const controllers = [0, 1, 2, 3].map(() => new AbortController());
    const ourNodes: string[] = [];
    const callers = controllers.map((controller, i) =>
      locks
        .withLock(
          path,
          (lock) =>
            turns.visit(`local-${i}`, lock, async () => {
              ourNodes.push((await inspect(path)).holder?.name ?? 'none');
            }),
          { signal: controller.signal },
        )
        .catch((err: unknown) => err),
    );
    let batchNode = '';
    await eventually('the batch waits on one node', async () => {
      const { queue } = await inspect(path);
      batchNode = queue[0]?.name ?? '';
      return queue.length === 1 && queue[0].data.pid === process.pid;
    });
    const late = lateAgent.acquire(path).then((token) => {
      turns.order.push('late-remote');
      return token;
    });
    await eventually('a remote node waits behind the batch', async () => {
      return (await inspect(path)).queue.length === 2;
    });

    controllers[1].abort();
    controllers[3].abort();
    expect(await callers[1]).toBeInstanceOf(LockAbortedError);
    expect(await callers[3]).toBeInstanceOf(LockAbortedError);
    const { queue } = await inspect(path);
    expect(queue.map((node) => node.name)).toEqual([batchNode, expect.any(String)]);
    expect(queue[1].data.pid).toBe(lateAgent.pid);

    await holderAgent.release(path);
    expect(await Promise.all([callers[0], callers[2]])).toEqual([undefined, undefined]);
    const lateToken = await late;
    expect(turns.order).toEqual(['local-0', 'local-2', 'late-remote']);
    expect(turns.overlaps).toBe(0);
    const [first, second] = turns.tokens;
    expect(first).toBeGreaterThan(holderToken);
    expect(second).toBe(first + 1n); // the same node, its next generation
    expect(lateToken).toBeGreaterThan(second);
    // Both were served on the batch's node, which was gone before the remote got the lock.
    expect(ourNodes).toEqual([batchNode, batchNode]);
    expect(await zk.admin.children(path)).not.toContain(batchNode);
    await lateAgent.release(path);
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('serves the rest of a batch after its holder released while the connection was down', async () => {
    const path = `${root}/release-while-down`;
    const agent = await startAgent();
    const locks = await connect({ sessionTimeoutMs: OUTAGE_SESSION_MS });
    const session = locks.sessionId;
    const order: string[] = [];
    // One tick: one node for the three of them; the first holds at once.
    const [first, second, third] = [0, 1, 2].map((i) =>
      locks.acquire(path).then((lock) => {
        order.push(`local-${i}`);
        return lock;
      }),
    );
    // If a check below fails, close() in afterEach rejects these: keep that from going unhandled.
    void second.catch(() => undefined);
    void third.catch(() => undefined);
    const lock0 = await first;
    const remote = agent.acquire(path).then((token) => {
      order.push('remote');
      return token;
    });
    await eventually('a remote node waits behind the batch', async () => {
      const { holder, queue } = await inspect(path);
      return holder?.data.pid === process.pid && queue.length === 1;
    });

    // The connection goes down (the server freezes); the holder releases while it is down.
    let released!: Promise<void>;
    await duringOutage(lock0, () => {
      released = lock0.release();
    });
    const next = await Promise.race([second, remote.then(() => undefined)]);
    if (!next) await agent.release(path); // unblock the batch before failing
    expect(order).toEqual(['local-0', 'local-1']);
    const lock1 = next!;
    await released;
    expect(lock1.state).toBe('held');
    expect(locks.sessionId).toBe(session);
    await lock1.release();
    const lock2 = await third;
    await lock2.release();
    const remoteToken = await remote;
    expect(order).toEqual(['local-0', 'local-1', 'local-2', 'remote']);
    expect(lock1.fencingToken).toBe(lock0.fencingToken + 1n);
    expect(lock2.fencingToken).toBe(lock1.fencingToken + 1n);
    expect(remoteToken).toBeGreaterThan(lock2.fencingToken);
    await agent.release(path);
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('deletes the node once the rest of its batch gave up while the connection was down', async () => {
    const path = `${root}/give-up-while-down`;
    const locks = await connect({ sessionTimeoutMs: OUTAGE_SESSION_MS });
    const controller = new AbortController();
    const first = locks.acquire(path);
    const rest = [1, 2].map(() =>
      locks.acquire(path, { signal: controller.signal }).catch((err: unknown) => err),
    );
    const lock0 = await first;
    expect(await zk.admin.children(path)).toHaveLength(1);

    let released!: Promise<void>;
    await duringOutage(lock0, () => {
      released = lock0.release();
      controller.abort();
    });
    for (const outcome of await Promise.all(rest)) expect(outcome).toBeInstanceOf(LockAbortedError);
    await released;
    await zk.expectFreeForOthers(path);
  });

  it('on close(), rejects the waiting callers, aborts the holder with client-closed, and leaves no znode', async () => {
    const path = `${root}/close`;
    const agent = await startAgent();
    const locks = await connect();
    const waits = [0, 1, 2].map((i) =>
      locks.acquire(path).then(
        (lock) => ({ i, lock }),
        (err: unknown) => ({ i, err }),
      ),
    );
    const holder = await waits[0];
    if (!('lock' in holder)) throw holder.err;
    const lock = holder.lock;
    const aborted = new Promise<unknown>((resolve) =>
      lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }),
    );
    // A caller that came later waits on a node of its own, and a remote node behind both.
    const later = locks.acquire(path).catch((err: unknown) => err);
    await eventually('our second node waits', async () => {
      return (await inspect(path)).queue.length === 1;
    });
    const remote = agent.acquire(path);
    await eventually('the remote node waits', async () => {
      return (await inspect(path)).queue.length === 2;
    });

    await locks.close();
    const outcomes = await Promise.all(waits.slice(1));
    for (const outcome of outcomes)
      expect('err' in outcome && outcome.err).toBeInstanceOf(ClientClosedError);
    expect(await later).toBeInstanceOf(ClientClosedError);
    const reason = await aborted;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe('client-closed');
    expect(lock.state).toBe('released');
    await lock.release(); // idempotent after close
    // The remote waiter gets the lock at once, not after our session times out.
    await remote;
    const children = await zk.admin.children(path);
    expect(children).toHaveLength(1);
    expect((await inspect(path)).holder?.data.pid).toBe(agent.pid);
    await agent.release(path);
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
  });

  it('requeues the waiting callers of a node deleted by someone else once its lost holder leaves; the holder that watches gets node-deleted', async () => {
    const path = `${root}/node-deleted`;
    const locks = await connect();
    const turns = new Turns();
    let lostReason: unknown;
    const batch = [0, 1, 2, 3].map((i) =>
      locks.withLock(path, (lock) =>
        turns.visit(`local-${i}`, lock, async () => {
          if (i !== 1) return tick();
          // Served in process on the shared node; watchForLoss() watches the node.
          const signal = lock.watchForLoss();
          const children = await zk.admin.children(path);
          expect(children).toHaveLength(1);
          await zk.admin.removeTree(`${path}/${children[0]}`);
          await eventually('the holder learns its node is gone', () => signal.aborted);
          lostReason = signal.reason;
          expect(lock.state).toBe('lost');
          // The callers still waiting queue again only once this lost holder leaves: a node of
          // ours queued now would come first and keep every other process waiting for this
          // code, which no longer holds the lock.
          expect(await zk.admin.children(path)).toEqual([]);
        }),
      ),
    );
    await Promise.all(batch);

    expect(lostReason).toBeInstanceOf(LockLostError);
    expect((lostReason as LockLostError).reason).toBe('node-deleted');
    expect(turns.order).toEqual(['local-0', 'local-1', 'local-2', 'local-3']);
    expect(turns.overlaps).toBe(0);
    turns.expectStrictlyIncreasingTokens();
    expect(turns.tokens[1]).toBe(turns.tokens[0] + 1n); // handed on in process
    // The callers after the loss were served on a new node: a later sequence, or a lock node the
    // server swept while it was empty and that was made again (a larger czxid, sequence from 0).
    expect(nodeOf(turns.tokens[2])).toBeGreaterThan(nodeOf(turns.tokens[1]));
    await eventually('no node is left', async () => (await zk.admin.children(path)).length === 0);
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
