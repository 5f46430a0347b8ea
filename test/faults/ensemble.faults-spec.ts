/**
 * Issue #13 §2 (`npm run test:faults`): 4 contender processes on a 3-node ensemble while its
 * members fail. Every critical section does a read-modify-write on a fenced store
 * (support/fault-run.ts); pass/fail is decided by the safety detectors (overlapping accepted
 * sections, lost updates, store value vs accepted writes) and by progress after each fault,
 * never by timing. Figures are printed for RELIABILITY.md.
 */
import { FaultRun, FaultReport } from './support/fault-run';
import { eventually, ZkAdmin } from '../core/support/zk-admin';
import { ZooKeeperServer } from '../support/zookeeper';
import { scaled } from '../support/time-scale';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** A figure's label suffix for pooled contenders. */
const pooled = (sessions: number): string => (sessions > 1 ? `, ${sessions} sessions each` : '');

/** What a wait may end with under faults: only documented errors. */
const DOCUMENTED_WAIT_OUTCOMES = ['wait:LockTimeoutError', 'wait:ZooKeeperUnavailableError'];

describe('a 3-node ensemble under faults, 4 contender processes', () => {
  let server: ZooKeeperServer;
  let run: FaultRun | undefined;
  const figures: Record<string, FaultReport> = {};

  beforeAll(async () => {
    server = await ZooKeeperServer.start({ size: 3 });
  });

  afterEach(async () => {
    run?.kill();
    run = undefined;
    for (const member of server.members) {
      member.resume();
      if (!member.running) member.start();
    }
    await server.waitForQuorum();
  });

  afterAll(async () => {
    console.log(`fault suite figures:\n${JSON.stringify(figures, null, 2)}`);
    await server?.stop();
  });

  /**
   * `sessions` > 1: pooled contenders (docs/design.md "Sessions as a pool") on 4 paths, which
   * their clients spread over their sessions (and so over the ensemble's members).
   */
  const startRun = async (
    name: string,
    options: { sessionMs: number; waitMs?: number; noLock?: boolean; sessions?: number },
  ): Promise<FaultRun> => {
    const sessions = options.sessions ?? 1;
    run = new FaultRun({
      connectionString: server.connectionString,
      paths: (sessions > 1 ? ['a', 'b', 'c', 'd'] : ['a', 'b']).map((p) => `/faults/${name}/${p}`),
      sessionMs: options.sessionMs,
      waitMs: options.waitMs ?? scaled(60_000),
      noLock: options.noLock,
      sessions,
    });
    await run.start();
    return run;
  };

  const expectSafe = (report: FaultReport): void => {
    expect(report.overlaps).toBe(0);
    expect(report.lostUpdates).toBe(0);
    expect(report.valueMismatches).toBe(0);
    const unexpected = Object.keys(report.outcomes).filter(
      (kind) =>
        kind !== 'ok' &&
        kind !== 'lost-before-write' &&
        kind !== 'stale-refused' &&
        !DOCUMENTED_WAIT_OUTCOMES.includes(kind),
    );
    expect(unexpected).toEqual([]);
  };

  it('detects overlaps and lost updates when the contenders do not lock (the detectors can fail)', async () => {
    const r = await startRun('no-lock', { sessionMs: 10_000, noLock: true });
    await r.progress(300, 'unlocked sections');
    await r.stop();
    const report = (figures['no lock (detector check)'] = r.report());
    expect(report.overlaps).toBeGreaterThan(0);
    expect(report.lostUpdates).toBeGreaterThan(0);
    expect(report.valueMismatches).toBeGreaterThan(0);
  });

  // sessions 4: each contender keeps 4 sessions, spread over the members.
  it.each([1, 4])(
    '1. leader SIGKILLed during contention, then restarted: no overlap, locks survive, locking resumes (sessions: %i)',
    async (sessions) => {
      // Sessions outlive the election (a few seconds here), so held locks must survive it.
      const r = await startRun(`leader-kill-${sessions}`, { sessionMs: 20_000, sessions });
      await r.progress(100, 'before the fault');
      const leader = await server.leader();
      r.phase = 'during';
      await leader.kill();
      const next = await server.leader();
      expect(next.id).not.toBe(leader.id);
      await r.progress(50, 'after the election, leader down');
      leader.start();
      await server.waitForQuorum();
      r.phase = 'after';
      await r.progress(100, 'after the restart');
      await r.stop();
      const report = (figures[`1. leader SIGKILL + restart${pooled(sessions)}`] = r.report());
      expectSafe(report);
      expect(report.outcomes['lost-before-write'] ?? 0).toBe(0);
      expect(report.staleRefused).toBe(0);
    },
  );

  it.each([1, 4])(
    '5. a follower SIGSTOPped (half-dead) with clients on it: they move on before their sessions expire (sessions: %i)',
    async (sessions) => {
      const sessionMs = 9_000;
      const r = await startRun(`member-pause-${sessions}`, { sessionMs, sessions });
      await r.progress(100, 'before the fault');
      // The follower most of our clients are connected to (the clients pick members at random).
      const leader = await server.leader();
      const followers = server.members.filter((m) => m !== leader);
      // `cons` may go unanswered on a loaded machine (seen: every count 0): ask until a follower
      // reports clients; with none on either (all 4 on the leader, 1 chance in 81) the scenario
      // would test nothing, and the wait fails saying so.
      let connections: number[] = [];
      await eventually('a follower with contender sessions on it', async () => {
        connections = await Promise.all(followers.map((m) => m.clientConnections()));
        return Math.max(...connections) > 0;
      });
      const follower = followers[connections[0] >= connections[1] ? 0 : 1];
      const clientsOnIt = Math.max(...connections);
      r.phase = 'during';
      follower.pause();
      // Longer than the session timeout: clients that stayed would be expired.
      await sleep(sessionMs + 3_000);
      await r.progress(50, 'with a member paused');
      follower.resume();
      await server.waitForQuorum();
      r.phase = 'after';
      await r.progress(100, 'after the resume');
      await r.stop();
      const report = r.report();
      figures[`5. follower SIGSTOP${pooled(sessions)}`] = {
        ...report,
        clientsOnPausedMember: clientsOnIt,
      } as FaultReport;
      expectSafe(report);
      expect(report.outcomes['lost-before-write'] ?? 0).toBe(0);
    },
  );

  it('4. a holder process SIGSTOPped past its session timeout: another takes the lock, the woken holder writes nothing', async () => {
    const sessionMs = 4_000;
    const r = await startRun('holder-pause', { sessionMs });
    await r.progress(50, 'before the fault');
    r.workers[0].send({ type: 'pause-in-section' });
    const inSection = await r.next(0, (m) => m.type === 'in-section');
    r.workers[0].kill('SIGSTOP');
    r.phase = 'during';
    const pausedOp = r.next(
      0,
      (m) => m.type === 'op' && m.token === inSection.token && m.path === inSection.path,
    );
    // The others go on, on the paused holder's path too, once its session has expired.
    const before = r.ops.filter((op) => op.path === inSection.path && op.result === 'ok').length;
    const deadline = Date.now() + scaled(120_000);
    while (
      r.ops.filter((op) => op.path === inSection.path && op.result === 'ok').length <
      before + 20
    ) {
      if (Date.now() > deadline)
        throw new Error(`no progress on ${String(inSection.path)}: ${r.summary()}`);
      await sleep(50);
    }
    r.workers[0].kill('SIGCONT');
    const op = await pausedOp;
    r.phase = 'after';
    await r.progress(50, 'after the resume');
    await r.stop();
    const report = (figures['4. holder SIGSTOP past its session'] = r.report());
    figures['4. holder SIGSTOP past its session'] = { ...report, pausedHolder: op } as FaultReport;
    expectSafe(report);
    // Its assertHeld() threw before the write (or the store refused it): never accepted.
    expect(['lost-before-write', 'stale-refused']).toContain(op.result);
    expect(op.signalAborted).toBe(true);
  });

  it.each([
    ['calls assertHeld() before its write', false],
    ['writes without checking', true],
  ] as const)(
    '4b. a holder whose event loop is blocked past its session timeout (busy CPU) %s: its lock is lost, its write never applied',
    async (_how, unchecked) => {
      const sessionMs = 4_000;
      const r = await startRun(unchecked ? 'holder-block-unchecked' : 'holder-block', {
        sessionMs,
      });
      await r.progress(50, 'before the fault');
      r.workers[0].send({ type: 'block', ms: sessionMs * 3, unchecked });
      const inSection = await r.next(0, (m) => m.type === 'in-section');
      r.phase = 'during';
      const blockedOp = await r.next(
        0,
        (m) => m.type === 'op' && m.token === inSection.token && m.path === inSection.path,
      );
      r.phase = 'after';
      await r.progress(50, 'after the block');
      await r.stop();
      const report = r.report();
      figures[`4b. holder event loop blocked, ${unchecked ? 'unchecked write' : 'assertHeld'}`] = {
        ...report,
        blockedHolder: blockedOp.result,
      } as FaultReport;
      expectSafe(report);
      // Checked: assertHeld() throws at once after the block. Unchecked: the store refuses the
      // write, because another holder claimed the path with a newer token meanwhile.
      expect(blockedOp.result).toBe(unchecked ? 'stale-refused' : 'lost-before-write');
    },
  );

  /** A holder lingers in its section while two members are down for `outageMs`. */
  const quorumLoss = async (
    name: string,
    sessionMs: number,
    outageMs: number,
    lingerMs: number,
    until?: 'reconnected',
  ) => {
    const waitMs = 2_000;
    const r = await startRun(name, { sessionMs, waitMs });
    await r.progress(50, 'before the fault');
    r.workers[0].send({ type: 'linger', ms: lingerMs, until });
    const inSection = await r.next(0, (m) => m.type === 'in-section');
    const heldOp = r.next(0, (m) => m.type === 'op' && m.token === inSection.token);
    const down = server.members.slice(0, 2);
    r.phase = 'during';
    await Promise.all(down.map((m) => m.stop()));
    await sleep(outageMs);
    down.forEach((m) => m.start());
    await server.waitForQuorum();
    const held = await heldOp;
    r.phase = 'after';
    // The same client processes, no restart: they lock again.
    await r.progress(100, 'after quorum came back');
    await r.stop();
    const report = r.report();
    const waits = r.ops.filter((op) => op.result.startsWith('wait:'));
    figures[name] = {
      ...report,
      holderOutcome: held.result,
      holderEvents: held.events,
      slowestFailedWaitMs: Math.max(0, ...waits.map((op) => op.waitedMs ?? 0)),
    } as FaultReport;
    expectSafe(report);
    // A wait that fails says so with a documented error, within its wait: a request already
    // sent may take up to the request timeout (the session timeout) to be given up.
    for (const op of waits) {
      expect(DOCUMENTED_WAIT_OUTCOMES).toContain(op.result);
      expect(op.waitedMs).toBeLessThanOrEqual(waitMs + sessionMs + scaled(2_000));
    }
    return { held, report };
  };

  it('3a. quorum lost for less than the session timeout: the holder keeps its lock, waits fail clearly, all resumes', async () => {
    // The holder stays in its section until it was told 'reconnected' (seen failing on a loaded
    // machine with a fixed 4 s linger: quorum came back after the section had ended).
    const { held } = await quorumLoss(
      '3a. quorum lost < session timeout',
      12_000,
      2_000,
      4_000,
      'reconnected',
    );
    // Told its ownership was unknown while no member could serve, then held again before it
    // wrote. After the write the settling ensemble may drop the client once more (seen in CI:
    // uncertain, reconnected, uncertain): that is not a loss, so only the write's view is exact.
    const events = held.events as string[];
    const atWrite = held.eventsAtWrite as string[];
    expect(atWrite[0]).toBe('uncertain');
    expect(atWrite[atWrite.length - 1]).toBe('reconnected');
    expect(events).not.toContain('lost');
    expect(held.result).toBe('ok');
    expect(held.signalAborted).toBe(false);
  });

  it('3b. quorum lost for longer than the session timeout: the holder loses its lock (signal aborts), writes nothing; all resumes', async () => {
    const sessionMs = 4_000;
    const { held } = await quorumLoss(
      '3b. quorum lost > session timeout',
      sessionMs,
      sessionMs + 4_000,
      sessionMs + 6_000,
    );
    expect(['lost-before-write', 'stale-refused']).toContain(held.result);
    expect(held.signalAborted).toBe(true);
    // Uncertain first, lost once the session timeout had passed.
    const events = held.events as string[];
    expect(events[0]).toBe('uncertain');
    expect(events[events.length - 1]).toBe('lost');
  });

  it('2. a rolling restart of all three members: no overlap, no lock stuck, nothing left behind', async () => {
    const r = await startRun('rolling', { sessionMs: 15_000 });
    await r.progress(50, 'before the fault');
    r.phase = 'during';
    for (const member of server.members) {
      await member.restart();
      await server.waitForQuorum();
      await r.progress(30, `after restarting member ${member.id}`);
    }
    r.phase = 'after';
    await r.progress(100, 'after the rolling restart');
    await r.stop();
    const report = (figures['2. rolling restart'] = r.report());
    expectSafe(report);
    const admin = await ZkAdmin.connect(server.connectionString);
    try {
      // Released and closed: no lock node of ours is left (parents may linger until cleanup).
      for (const path of ['/faults/rolling/a', '/faults/rolling/b']) {
        expect(await admin.children(path).catch(() => [])).toEqual([]);
      }
    } finally {
      admin.close();
    }
  });
});
