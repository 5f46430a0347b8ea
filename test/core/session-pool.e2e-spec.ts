/**
 * A client with several sessions (option `sessions`). Every lock path uses one
 * session, the same for a mutex, both sides of a read/write lock, a semaphore (its `locks` and
 * `leases`) and an election on that path; a session expired on the server loses only its own
 * locks, each reported with the session named, while the other sessions' locks stay held; the
 * client's state, `sessions`, inspect() and close() cover every session, and nothing is left.
 * Runs its own ZooKeeper server, so its watch count is ours alone.
 */
import {
  InvalidLockOptionsError,
  LockHandle,
  LockLostError,
  ZkLockClient,
  ZooKeeperUnavailableError,
} from '../../lib';
import type { LockEvents, SessionInfo } from '../../lib/core';
import { sessionIndexOf } from '../../lib/core/zookeeper/zk-connection';
import { scaled } from '../support/time-scale';
import { mntr } from '../support/zookeeper';
import { expireSession } from './support/expire-session';
import { useOwnServer } from './support/own-server';
import { snapshotResources } from './support/resources';
import { TcpProxy } from './support/tcp-proxy';
import { eventually } from './support/zk-admin';

const SESSIONS = 4;

/**
 * The quiet baseline of this process: the fewest timers and sockets over a second (a look at the
 * server's watch count may still have a socket or timer closing).
 */
async function quietResources(): Promise<Record<string, number>> {
  const baseline = snapshotResources({ process }).active;
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = snapshotResources({ process }).active;
    for (const type of Object.keys(baseline)) baseline[type] = Math.min(baseline[type], now[type]);
  }
  return baseline;
}

/** No more timers or sockets than `baseline`. */
function noMoreThan(baseline: Record<string, number>): boolean {
  const now = snapshotResources({ process }).active;
  return Object.keys(baseline).every((type) => now[type] <= baseline[type]);
}

/** The local port of session `index`'s socket: which of a proxy's connections is that session's. */
function localPortOf(client: ZkLockClient, index: number): number {
  const member = (client as any).pool.members[index];
  return member.current.wire.localPort;
}

describe('a client with several sessions', () => {
  const zk = useOwnServer('session-pool', { sessionTimeoutMs: 10_000 });
  const pooled = () => zk.connect({ sessions: SESSIONS, namespace: zk.root });
  /**
   * A pooled client the test closes itself (not the fixture's), cleaning its paths up at once:
   * for the checks that nothing is left after its close().
   */
  const ownPooled = () =>
    ZkLockClient.connect({
      connectionString: zk.server.connectionString,
      sessionTimeoutMs: 10_000,
      namespace: zk.root,
      sessions: SESSIONS,
      parentCleanupDelayMs: 50,
    });
  /** The session index a path of this file uses (the namespace is part of the lock path). */
  const indexOf = (path: string) => sessionIndexOf(`${zk.root}${path}`, SESSIONS);
  const watches = async () => (await mntr(zk.server.members[0].clientPort)).zk_watch_count;

  it('refuses a sessions option out of 1 to 16 before connecting, naming the option', async () => {
    for (const sessions of [0, 17, 1.5, Number.NaN]) {
      const connect = ZkLockClient.connect({ connectionString: '127.0.0.1:1', sessions });
      await expect(connect).rejects.toBeInstanceOf(InvalidLockOptionsError);
      await expect(connect).rejects.toThrow(
        /ZkLockClient.connect\(\): sessions must be a whole number from 1 to 16.*maxClientCnxns/,
      );
    }
  });

  it('fails the first connect with ZooKeeperUnavailableError, as one session does, leaving nothing open', async () => {
    const baseline = await quietResources();
    const connect = ZkLockClient.connect({
      connectionString: '127.0.0.1:1', // nothing listens there
      sessions: SESSIONS,
      connectTimeoutMs: 1_000,
    });
    await expect(connect).rejects.toBeInstanceOf(ZooKeeperUnavailableError);
    await expect(connect).rejects.toThrow(/127\.0\.0\.1:1/);
    await eventually('no timer or socket is left', () => noMoreThan(baseline));
  });

  it('opens every session, spreads paths over them and keeps each path on one session', async () => {
    const locks = await pooled();
    expect(locks.state).toBe('CONNECTED');
    expect(locks.sessions.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(locks.sessions.every((s) => s.state === 'CONNECTED')).toBe(true);
    const ids = locks.sessions.map((s) => s.id);
    expect(new Set(ids).size).toBe(SESSIONS);
    expect(locks.sessionId).toBe(ids[0]);

    const paths = Array.from({ length: 16 }, (_, i) => `/spread-${i}`);
    const held = await Promise.all(paths.map((p) => locks.acquire(p)));
    const owners = await Promise.all(
      paths.map(async (p) => (await locks.inspect(p)).holder!.sessionId),
    );
    expect(owners).toEqual(paths.map((p) => ids[indexOf(p)]));
    expect(new Set(owners).size).toBeGreaterThan(1);
    await Promise.all(held.map((l) => l.release()));
  });

  it('puts a mutex, both read/write sides, a semaphore and an election on one path on one session', async () => {
    const locks = await pooled();
    const ids = locks.sessions.map((s) => s.id);
    // Paths that use different sessions, so a kind pinned to one session would show.
    const paths = ['/kinds-a', '/kinds-b', '/kinds-c', '/kinds-d', '/kinds-e', '/kinds-f'];
    expect(new Set(paths.map(indexOf)).size).toBeGreaterThan(1);
    for (const path of paths) {
      const expected = ids[indexOf(path)];
      const holderOf = async (p = path) => (await locks.inspect(p)).holder?.sessionId;
      // One kind after the other on the same path (mixing them at once is a LockModeError).
      const mutex = await locks.acquire(path);
      expect(await holderOf()).toBe(expected);
      await mutex.release();

      const write = await locks.writeLock(path).acquire();
      expect(await holderOf()).toBe(expected);
      await write.release();
      const reader = await locks.readLock(path).acquire();
      expect(await holderOf()).toBe(expected);
      await reader.release();

      const election = locks.election(path, { participantId: 'me' });
      await election.whenLeader();
      expect(await holderOf()).toBe(expected);
      await election.close();

      // Last (its `locks` and `leases` children would be contenders of a lock on the path): a
      // semaphore's lease, and its `locks` mutex held by a second acquirer waiting for room.
      const semaphore = locks.semaphore(path, { maxLeases: 1 });
      const lease = await semaphore.acquire();
      const waiting = semaphore.acquire();
      await eventually('the second acquirer holds the mutex and waits', async () => {
        return (await zk.admin.children(`${zk.root}${path}/leases`)).length === 2;
      });
      expect((await semaphore.inspect()).holders[0].sessionId).toBe(expected);
      expect((await semaphore.inspect()).waiting[0].sessionId).toBe(expected);
      expect(await holderOf(`${path}/locks`)).toBe(expected);
      await lease.release();
      await (await waiting).release();
    }
  });

  it('loses only the expired session’s locks, reports each naming the session, keeps the rest', async () => {
    const watchesBefore = await watches();
    const locks = await pooled();
    const other = await zk.connect({ sessions: SESSIONS, namespace: zk.root });
    const before = locks.sessions;
    const paths = Array.from({ length: 24 }, (_, i) => `/expiry-${i}`);
    const target = indexOf(paths[0]);
    const onTarget = paths.filter((p) => indexOf(p) === target);
    const elsewhere = paths.filter((p) => indexOf(p) !== target);
    expect(onTarget.length).toBeGreaterThan(0);
    expect(elsewhere.length).toBeGreaterThan(0);
    const held = new Map<string, LockHandle>();
    for (const p of paths) held.set(p, await locks.acquire(p));
    // Waiters of another client queue behind every lock, on both sides of the expiry.
    const waits = paths.map((p) => other.acquire(p).then((lock) => lock.release()));
    await eventually('every path has a waiter', async () => {
      const queues = await Promise.all(paths.map((p) => locks.inspect(p)));
      return queues.every((q) => q.queue.length === 1);
    });
    // Which locks were told their session was disconnected (SUSPENDED: ownership unknown).
    const uncertain = new Set<string>();
    for (const [p, lock] of held) lock.on('uncertain', () => uncertain.add(p));
    const lost: LockEvents['lost'][] = [];
    const changes: SessionInfo[] = [];
    const states: string[] = [];
    locks.on('lost', (e) => lost.push(e));
    locks.on('session', (s) => changes.push(s));
    locks.on('state', (s) => states.push(s));

    const expiredId = await expireSession(zk.server.connectionString, locks, target);
    expect(expiredId).toBe(before[target].id);
    await eventually('every lock of the expired session is lost', () =>
      onTarget.every((p) => held.get(p)!.state === 'lost'),
    );
    await eventually('the client is connected again', () => locks.state === 'RECONNECTED');

    for (const p of onTarget) {
      const reason = held.get(p)!.signal.reason;
      expect(reason).toBeInstanceOf(LockLostError);
      expect((reason as LockLostError).reason).toBe('session-expired');
    }
    expect(lost.map((e) => e.path).sort()).toEqual([...onTarget].sort());
    for (const e of lost) {
      expect(e.session).toMatchObject({ index: target, id: expiredId });
      expect(e.error.reason).toBe('session-expired');
    }
    // Only the expired session changed; it came back as a new session.
    expect(new Set(changes.map((c) => c.index))).toEqual(new Set([target]));
    expect(changes.map((c) => c.state)).toContain('LOST');
    expect(changes.at(-1)).toMatchObject({ index: target, state: 'RECONNECTED' });
    expect(states).toContain('LOST');
    expect(states.at(-1)).toBe('RECONNECTED');
    const after = locks.sessions;
    expect(after[target].id).not.toBe(expiredId);
    after.forEach((s, i) => i !== target && expect(s).toEqual(before[i]));

    // The other sessions' locks were never even uncertain; still held, by their nodes, first in line.
    expect(elsewhere.filter((p) => uncertain.has(p))).toEqual([]);
    for (const p of elsewhere) {
      const lock = held.get(p)!;
      expect(lock.state).toBe('held');
      expect(() => lock.assertHeld()).not.toThrow();
      const seen = await locks.inspect(p);
      expect(seen.holder?.sessionId).toBe(before[indexOf(p)].id);
      expect(seen.queue).toHaveLength(1);
    }
    // The other client got the expired session's paths; it waits for the rest.
    await Promise.all(onTarget.map((p) => held.get(p)!.release()));
    await Promise.all(elsewhere.map((p) => held.get(p)!.release()));
    await Promise.all(waits);
    // Nothing of either client is left: the expired session's nodes went with it.
    await Promise.all([locks.close(), other.close()]);
    await eventually('no node is left', async () => {
      const children = await zk.admin.children(zk.root);
      const left = await Promise.all(
        children
          .filter((c) => c.startsWith('expiry-'))
          .map((c) => zk.admin.children(`${zk.root}/${c}`)),
      );
      return left.every((nodes) => nodes.length === 0);
    });
    await eventually('no watch is left', async () => (await watches()) === watchesBefore);
  });

  it('covers every session in close(): no node, watch, timer, socket or listener is left', async () => {
    const watchesBefore = await watches();
    const baseline = await quietResources();
    const locks = await ownPooled();
    const connectedResources = snapshotResources({ process }).active;
    const states: string[] = [];
    locks.on('state', (s) => states.push(s));
    const paths = Array.from({ length: 12 }, (_, i) => `/close-${i}`);
    const held = await Promise.all(paths.map((p) => locks.acquire(p)));
    for (const lock of held) expect(lock.signal.aborted).toBe(false); // each watches its node
    const leases = await locks.semaphore('/close-sem', { maxLeases: 2 }).acquire();
    expect(await watches()).toBeGreaterThan(watchesBefore);
    await locks.close();
    expect(states).toEqual(['CLOSED']);
    expect(locks.state).toBe('CLOSED');
    expect(locks.eventNames()).toEqual([]);
    expect(held.every((l) => l.state === 'released')).toBe(true);
    expect(leases.state).toBe('released');
    expect(locks.sessions.every((s) => s.state === 'CLOSED')).toBe(true);
    await eventually('no node is left', async () => {
      const children = await zk.admin.children(zk.root);
      return children.filter((c) => c.startsWith('close-')).length === 0;
    });
    await eventually('no watch is left', async () => (await watches()) === watchesBefore);
    await eventually('no timer or socket is left', () => noMoreThan(baseline));
    // And while connected there were more: the check can see a session's timers and socket.
    expect(connectedResources.TCPSocketWrap).toBeGreaterThanOrEqual(
      baseline.TCPSocketWrap + SESSIONS,
    );
  });

  describe('behind a proxy that cuts or holds one session’s connection', () => {
    const TWO = 2;
    let proxy: TcpProxy;
    beforeEach(async () => (proxy = await TcpProxy.start(zk.server.members[0].clientPort)));
    afterEach(async () => {
      proxy.releaseRequests();
      await proxy.close();
    });
    /** The first `<prefix>-<i>` whose lock path uses session `index` of two. */
    const pathOn = (prefix: string, index: number) => {
      for (let i = 0; ; i++) {
        if (sessionIndexOf(`${zk.root}${prefix}-${i}`, TWO) === index) return `${prefix}-${i}`;
      }
    };
    /** The server's session count (its mntr gauge; our admin client's session is one). */
    const serverSessions = async () => {
      const count = (await mntr(zk.server.members[0].clientPort)).zk_global_sessions;
      expect(count).toEqual(expect.any(Number));
      return count;
    };

    it('answers a try on one session while another session is disconnected, and keeps its locks certain', async () => {
      const locks = await zk.connect({
        connectionString: proxy.connectionString,
        sessions: TWO,
        namespace: zk.root,
      });
      const [a, b] = [0, 1]; // session a is cut off, session b goes on
      const heldA = await locks.acquire(pathOn('/cut-held', a));
      const heldB = await locks.acquire(pathOn('/cut-held', b));
      const uncertain: string[] = [];
      heldA.on('uncertain', () => uncertain.push('a'));
      heldB.on('uncertain', () => uncertain.push('b'));
      const changes: SessionInfo[] = [];
      locks.on('session', (s) => changes.push(s));

      // A try on session b, in flight (its requests held by the proxy) while session a drops.
      proxy.holdRequestsOf(localPortOf(locks, b));
      const tried = locks.tryAcquire(pathOn('/cut-try', b)).catch((err: Error) => err);
      await eventually(
        'the try’s first request is under way',
        () => proxy.heldOps.some((op) => op !== 11), // 11: a ping
      );
      proxy.cut(localPortOf(locks, a));
      await eventually('session a is disconnected', () =>
        changes.some((c) => c.index === a && c.state === 'SUSPENDED'),
      );
      proxy.releaseRequests();
      // Not ZooKeeperUnavailableError: session a's loss says nothing about session b.
      const lock = await tried;
      expect(lock).not.toBeInstanceOf(Error);
      expect(lock).toMatchObject({ state: 'held' });
      await (lock as LockHandle).release();

      // Session a came back within its session: its lock was uncertain, then held again; session
      // b's lock was never uncertain, and session b never left CONNECTED.
      await eventually('the client is connected again', () => locks.state === 'RECONNECTED');
      expect(uncertain).toEqual(['a']);
      expect(changes.every((c) => c.index === a)).toBe(true);
      expect(heldA.state).toBe('held');
      expect(heldB.state).toBe('held');
      expect(() => heldB.assertHeld()).not.toThrow();
      expect(locks.sessions[b].state).toBe('CONNECTED');
      await Promise.all([heldA.release(), heldB.release()]);
      await locks.close(); // while the proxy is up, so that its sessions end on the server
    });

    /** A client of TWO sessions through the proxy, which lets only `accepted` connections on. */
    const connectAccepting = (accepted: number): Promise<ZkLockClient> => {
      proxy.acceptOnly(accepted);
      return ZkLockClient.connect({
        connectionString: proxy.connectionString,
        sessions: TWO,
        sessionTimeoutMs: 10_000,
        connectTimeoutMs: scaled(2_000),
      });
    };

    it('fails a first connect that only some sessions make, closing the ones that did: nothing is left', async () => {
      const sessionsBefore = await serverSessions();
      const baseline = await quietResources();
      const connect = connectAccepting(1); // the first session connects, the other is refused
      await expect(connect).rejects.toBeInstanceOf(ZooKeeperUnavailableError);
      await expect(connect).rejects.toThrow(
        new RegExp(`${proxy.connectionString}.*maxClientCnxns.*sessions`),
      );
      // The session that connected was closed (not left to expire on the server).
      await eventually('the server has no session of ours', async () => {
        return (await serverSessions()) === sessionsBefore;
      });
      expect(proxy.connections).toBe(0);
      await eventually('no timer or socket is left', () => noMoreThan(baseline));
    });

    it('names maxClientCnxns when a server closes every connection of the pool at once', async () => {
      // What a server over its maxClientCnxns does: accept, then close (the proxy refuses all).
      const connect = connectAccepting(0);
      await expect(connect).rejects.toBeInstanceOf(ZooKeeperUnavailableError);
      await expect(connect).rejects.toThrow(
        new RegExp(`${proxy.connectionString}.*2 of this client's 2 .*maxClientCnxns.*sessions`),
      );
    });

    it('closes right after one session expired: within its bound, nothing left', async () => {
      const watchesBefore = await watches();
      const sessionsBefore = await serverSessions();
      const baseline = await quietResources();
      const locks = await ownPooled();
      const paths = Array.from({ length: 8 }, (_, i) => `/expire-close-${i}`);
      const held = await Promise.all(paths.map((p) => locks.acquire(p)));
      const target = indexOf(paths[0]);
      await expireSession(zk.server.connectionString, locks, target);
      const startedAt = Date.now();
      await locks.close();
      // close()'s bound: sessionTimeoutMs + requestTimeoutMs (requestTimeoutMs = sessionTimeoutMs),
      // with a margin for a loaded machine.
      expect(Date.now() - startedAt).toBeLessThan(10_000 + 10_000 + scaled(2_000));
      expect(locks.state).toBe('CLOSED');
      expect(locks.eventNames()).toEqual([]);
      expect(held.every((l) => l.state !== 'held')).toBe(true);
      await eventually('no node is left', async () => {
        const children = await zk.admin.children(zk.root);
        return children.filter((c) => c.startsWith('expire-close-')).length === 0;
      });
      await eventually('the server has no session of ours', async () => {
        return (await serverSessions()) === sessionsBefore;
      });
      await eventually('no watch is left', async () => (await watches()) === watchesBefore);
      await eventually('no timer or socket is left', () => noMoreThan(baseline));
    });
  });
});
