/**
 * A leader election on the lock engine, in Curator LeaderLatch's node layout:
 * leadership in the order participants joined, stepDown() and close() handing it on, a fencing
 * token that grows from leader to leader (also across re-creation of the path), a signal that
 * aborts when our node is deleted, the participants' ids from node data, errors that name the
 * path, and nothing left behind after close().
 */
import {
  ClientClosedError,
  ElectionClosedError,
  InvalidLockOptionsError,
  InvalidLockPathError,
  type LeaderLatch,
  LeadershipEnd,
  LeadershipTimeoutError,
  LockLostError,
  ZkLockClient,
} from '../../lib';
import { trackOwnResources } from '../support/own-resources';
import { useCoreFixture } from './support/core-fixture';
import { eventually, settlesWithin, zkConnectFromEnv } from './support/zk-admin';

const LATCH_NODE = /^_c_[0-9a-f-]{36}-latch-\d{10}$/;

describe('leader election (Curator LeaderLatch layout)', () => {
  const zk = useCoreFixture('election');
  const clients: ZkLockClient[] = [];
  /** What `call()` returns, run from `election`'s 'notLeader' listener as it is closed. */
  const onClosedNotLeader = <T>(election: LeaderLatch, call: () => T): (() => T | undefined) => {
    let value: T | undefined;
    election.on('notLeader', (end: LeadershipEnd) => {
      if (end.reason === 'closed') value = call();
    });
    return () => value;
  };
  const connect = async (): Promise<ZkLockClient> => {
    const client = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessionTimeoutMs: 10_000,
    });
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it('leads in the order participants joined; close() hands leadership to the next', async () => {
    const path = `${zk.root}/fifo`;
    const [a, b, c] = await Promise.all([connect(), connect(), connect()]);
    const ea = a.election(path, { participantId: 'a' });
    const eb = b.election(path, { participantId: 'b' });
    const ec = c.election(path, { participantId: 'c' });
    for (const e of [ea, eb, ec]) await e.start();
    const first = await ea.whenLeader();
    expect(first).toMatchObject({ path, participantId: 'a' });
    expect([ea.isLeader, eb.isLeader, ec.isLeader]).toEqual([true, false, false]);
    expect(await eb.getParticipants()).toEqual([
      { id: 'a', isLeader: true },
      { id: 'b', isLeader: false },
      { id: 'c', isLeader: false },
    ]);
    // Curator's protected names, the participant id as the node's data.
    const nodes = await zk.admin.children(path);
    expect(nodes).toHaveLength(3);
    for (const node of nodes) expect(node).toMatch(LATCH_NODE);
    expect((await Promise.all(nodes.map((n) => zk.admin.getData(`${path}/${n}`)))).sort()).toEqual([
      'a',
      'b',
      'c',
    ]);

    await ea.close();
    expect(first.signal.aborted).toBe(true);
    const second = await eb.whenLeader();
    expect(ec.isLeader).toBe(false);
    expect(await ec.getLeader()).toEqual({ id: 'b', isLeader: true });
    await eb.close();
    const third = await ec.whenLeader();
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(third.fencingToken).toBeGreaterThan(second.fencingToken);
    await ec.close();
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('stepDown() aborts the signal, moves leadership to the next and re-joins at the back', async () => {
    const path = `${zk.root}/step-down`;
    const [a, b] = await Promise.all([connect(), connect()]);
    const ea = a.election(path, { participantId: 'a' });
    const eb = b.election(path, { participantId: 'b' });
    const ends: LeadershipEnd[] = [];
    ea.on('notLeader', (end) => ends.push(end));
    const granted: bigint[] = [];
    eb.on('isLeader', (l) => granted.push(l.fencingToken));
    await ea.start();
    await eb.start();
    const first = await ea.whenLeader();

    await ea.stepDown();
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toBeInstanceOf(LockLostError);
    expect(ends).toEqual([{ reason: 'stepped-down' }]);
    expect(ea.isLeader).toBe(false);
    expect(ea.leadership).toBeNull();
    const second = await eb.whenLeader();
    expect(granted).toEqual([second.fencingToken]);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect((await ea.getParticipants()).map((p) => p.id)).toEqual(['b', 'a']);

    await eb.stepDown(); // and back
    const third = await ea.whenLeader();
    expect(third.fencingToken).toBeGreaterThan(second.fencingToken);
    await ea.stepDown(); // a gives up again: b leads, a waits behind it
    const fourth = await eb.whenLeader();
    expect(fourth.fencingToken).toBeGreaterThan(third.fencingToken);
    await ea.stepDown(); // a does not lead: a no-op, b keeps leading
    expect(fourth.signal.aborted).toBe(false);
    expect(eb.leadership).toBe(fourth);
    expect((await ea.getParticipants()).map((p) => p.id)).toEqual(['b', 'a']);
    await Promise.all([ea.close(), eb.close()]);
  });

  it('tokens keep growing after the election path is removed and created again', async () => {
    const path = `${zk.root}/recreated`;
    const a = await connect();
    const first = a.election(path, { participantId: 'a' });
    const before = await first.whenLeader();
    const czxid = await zk.admin.czxid(path);
    // Leave, remove the path (as an operator or the cleanup would), join again.
    await first.close();
    await zk.admin.removeTree(path);
    const again = a.election(path, { participantId: 'b' });
    const after = await again.whenLeader();
    expect(await zk.admin.czxid(path)).toBeGreaterThan(czxid);
    expect(after.fencingToken).toBeGreaterThan(before.fencingToken);
    await again.close();
  });

  it('a leader whose node is deleted is told (signal, notLeader) and joins again', async () => {
    const path = `${zk.root}/deleted`;
    const a = await connect();
    const election = a.election(path, { participantId: 'a' });
    const ends: LeadershipEnd[] = [];
    election.on('notLeader', (end) => ends.push(end));
    const first = await election.whenLeader();
    const [node] = await zk.admin.children(path);
    await zk.admin.remove(`${path}/${node}`);
    await eventually('the signal aborts', () => first.signal.aborted);
    expect(first.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'node-deleted' });
    expect(ends).toEqual([{ reason: 'lost', error: first.signal.reason }]);
    // Alone in the election, it leads again on a new node, with a greater token.
    await eventually('it leads again', () => election.isLeader);
    const second = election.leadership!;
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(await zk.admin.children(path)).not.toContain(node);
    await election.close();
  });

  it('whenLeader() times out with the path, the limit and who is ahead, and stays in line', async () => {
    const path = `${zk.root}/timeout`;
    const [a, b] = await Promise.all([connect(), connect()]);
    const leader = a.election(path, { participantId: 'a' });
    await leader.whenLeader();
    const waiting = b.election(path, { participantId: 'b' });
    const error = await waiting.whenLeader({ waitTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeadershipTimeoutError);
    expect(error).toMatchObject({ path, waitTimeoutMs: 300, ahead: 1 });
    expect((error as Error).message).toContain(`leadership of "${path}"`);
    expect((await waiting.getParticipants()).map((p) => p.id)).toEqual(['a', 'b']);
    const aborted = new AbortController();
    const pending = waiting.whenLeader({ signal: aborted.signal });
    aborted.abort();
    await expect(pending).rejects.toMatchObject({ name: 'LockAbortedError', path });
    await leader.close();
    await waiting.whenLeader();
    await waiting.close();
    await expect(waiting.start()).rejects.toBeInstanceOf(ElectionClosedError);
  });

  it('close() ends a whenLeader() called in the same tick, or from its own notLeader listener', async () => {
    // Both waits begin after close() has told its waiters: they once waited for good.
    const path = `${zk.root}/close-race`;
    const [a, b] = await Promise.all([connect(), connect()]);
    const leader = a.election(path, { participantId: 'a' });
    await leader.whenLeader();
    const waiting = b.election(path, { participantId: 'b' });
    await waiting.start();
    const sameTick = waiting.whenLeader();
    const closing = waiting.close();
    await expect(
      settlesWithin('whenLeader() called just before close()', sameTick),
    ).rejects.toBeInstanceOf(ElectionClosedError);
    await closing;

    const again = onClosedNotLeader(leader, () => leader.whenLeader().catch((e: unknown) => e));
    await leader.close();
    expect(again()).toBeDefined();
    expect(
      await settlesWithin("whenLeader() from the leader's notLeader listener", again()!),
    ).toBeInstanceOf(ElectionClosedError);
  });

  it('close() called again from its own notLeader listener gets the same promise: it leaves once', async () => {
    // close() tells 'notLeader' while it runs: a second close() from there once left a second
    // time, with a promise of its own (the first had not stored its promise yet).
    const path = `${zk.root}/close-again`;
    const a = await connect();
    const election = a.election(path, { participantId: 'a' });
    await election.whenLeader();
    const leave = vi.spyOn(election as unknown as { leave(): Promise<void> }, 'leave');
    const again = onClosedNotLeader(election, () => election.close());
    const closing = election.close();
    expect(again()).toBe(closing);
    await settlesWithin('close()', closing);
    expect(leave).toHaveBeenCalledTimes(1);
    expect(await zk.admin.children(path)).toEqual([]);
  });

  it('an election started while its client closes, or after, fails with ClientClosedError and sends nothing', async () => {
    // close() leaves the elections it knows of: one started from a listener that close() runs
    // (after it listed them) once joined, and led, on the closing client.
    const path = `${zk.root}/client-closing`;
    const a = await connect();
    const leader = a.election(`${path}-a`, { participantId: 'a' });
    const during = a.election(`${path}-b`, { participantId: 'b' });
    const after = a.election(`${path}-c`, { participantId: 'c' });
    await leader.whenLeader();
    const joined = onClosedNotLeader(leader, () => during.whenLeader().catch((e: unknown) => e));
    await a.close();
    expect(joined()).toBeDefined();
    expect(
      await settlesWithin(
        "whenLeader() from a notLeader listener of the client's close()",
        joined()!,
      ),
    ).toBeInstanceOf(ClientClosedError);
    expect(during.isLeader).toBe(false);
    await expect(
      settlesWithin('start() after the client closed', after.start()),
    ).rejects.toBeInstanceOf(ClientClosedError);
    for (const p of [`${path}-b`, `${path}-c`]) expect(await zk.admin.exists(p)).toBe(false);
    await Promise.all([during.close(), after.close()]);
  });

  it('fails early, naming the path, for a bad path or participant id', () => {
    expect(() => zk.locks.election('elections/x')).toThrow(InvalidLockPathError);
    expect(() => zk.locks.election('/elections/x/')).toThrow(/"\/elections\/x\/"/);
    expect(() =>
      zk.locks.election('/elections/x', { participantId: 42 as unknown as string }),
    ).toThrow(InvalidLockOptionsError);
    expect(() => zk.locks.election('/elections/x', { participantId: 'x'.repeat(2000) })).toThrow(
      /\/elections\/x.*participantId/,
    );
  });

  it('getLeader() is null and getParticipants() empty where nobody takes part', async () => {
    const election = zk.locks.election(`${zk.root}/nobody`);
    expect(await election.getLeader()).toBeNull();
    expect(await election.getParticipants()).toEqual([]);
  });

  it('leaves no znode, watch callback, listener or timer behind after close()', async () => {
    const path = `${zk.root}/hygiene`;
    const own = await trackOwnResources(async () => {
      const a = await ZkLockClient.connect({
        connectionString: zkConnectFromEnv(),
        parentCleanupDelayMs: 50,
      });
      const b = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
      const ea = a.election(path, { participantId: 'a' });
      const eb = b.election(path, { participantId: 'b' });
      const noop = (): void => undefined;
      ea.on('isLeader', noop);
      await ea.whenLeader();
      await eb.start();
      await ea.stepDown();
      await eb.whenLeader();
      await eb.close();
      await ea.whenLeader({ waitTimeoutMs: 60_000 });
      await ea.close();
      await eventually('the path is cleaned up', async () => !(await zk.admin.exists(path)));
      await Promise.all([a.close(), b.close()]);
    });
    expect(await own.leftOpen()).toEqual([]);
  });
});
