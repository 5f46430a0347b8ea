/**
 * 4 contender processes on a 3-node ensemble while its members fail (`npm run test:faults`).
 * Every critical section does a read-modify-write on a fenced store
 * (support/fault-run.ts); pass/fail is decided by the safety detectors (overlapping accepted
 * sections, lost updates, store value vs accepted writes) and by progress after each fault,
 * never by timing. Figures are printed for RELIABILITY.md.
 *
 * The contenders run the library's default client, as users do: CLIENT_DEFAULTS.sessions (1)
 * session each, on two lock paths; scenarios 1 and 5 also run pooled with 4 sessions (docs/design.md
 * "Sessions as a pool"), on one lock path per session, so every session carries locks. Where a holder is broken
 * (3a, 3b, 4, 4b) it holds a lock on each of its sessions at once, and each of them must be kept
 * or lost as the scenario says, each loss told by its client's `lost` event naming the session.
 * After every scenario the contenders must have closed and exited by themselves, leaving no lock
 * node. One session of a pool expiring while the others stay: test/core/session-pool.e2e-spec.ts.
 */
import { FaultRun, FaultReport, HeldSection } from './support/fault-run';
import { CLIENT_DEFAULTS } from '../../lib/core/client/client-options';
import { sessionIndexOf } from '../../lib/core/zookeeper/zk-connection';
import { eventually, ZkAdmin } from '../core/support/zk-admin';
import { ZooKeeperServer } from '../support/zookeeper';
import { scaled } from '../support/time-scale';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const DEFAULT_SESSIONS = CLIENT_DEFAULTS.sessions;
/** A figure's label suffix: the contenders' sessions, when not 1. */
const pooled = (sessions: number | undefined): string =>
  (sessions ?? DEFAULT_SESSIONS) === 1 ? '' : `, ${sessions ?? DEFAULT_SESSIONS} sessions each`;
/** Scenarios run with the default (1 session) and with `sessions: 4`. */
const SESSION_VARIANTS = [
  [`default ${DEFAULT_SESSIONS}`, undefined],
  ['4', 4],
] as const;

/**
 * A run's lock paths: two for 1-session contenders; for pooled ones, one on each session (the
 * first of p0, p1, ... whose hash picks it), so every session of every contender carries locks.
 */
function lockPaths(name: string, sessions: number): string[] {
  if (sessions === 1) return ['a', 'b'].map((p) => `/faults/${name}/${p}`);
  const bySession = new Map<number, string>();
  for (let n = 0; bySession.size < sessions; n++) {
    const path = `/faults/${name}/p${n}`;
    const index = sessionIndexOf(path, sessions);
    if (!bySession.has(index)) bySession.set(index, path);
  }
  return [...bySession.keys()].sort((a, b) => a - b).map((index) => bySession.get(index)!);
}

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
   * `sessions` left out: the client's default (one session), as users run it; with `sessions: N`
   * a path per session, which the sessions spread over the ensemble's members (docs/design.md
   * "Sessions as a pool").
   */
  const startRun = async (
    name: string,
    options: { sessionMs: number; waitMs?: number; noLock?: boolean; sessions?: number },
  ): Promise<FaultRun> => {
    const sessions = options.sessions ?? DEFAULT_SESSIONS;
    run = new FaultRun({
      connectionString: server.connectionString,
      paths: lockPaths(name, sessions),
      sessionMs: options.sessionMs,
      waitMs: options.waitMs ?? scaled(60_000),
      noLock: options.noLock,
      sessions: options.sessions,
    });
    await run.start();
    // The paths were spread for this many sessions: each contender's client must have them.
    expect(run.sessions).toEqual(run.workers.map(() => sessions));
    return run;
  };

  /**
   * After `r.stop()`: every contender closed its client and exited by itself (a socket or timer
   * of any of its sessions would keep it alive until the harness kills it), and no lock node is
   * left on any path once the sessions' closes have gone through the ensemble.
   */
  const expectNothingLeft = async (r: FaultRun): Promise<void> => {
    expect(r.exits).toEqual(r.workers.map(() => ({ code: 0, signal: null })));
    const admin = await ZkAdmin.connect(server.connectionString);
    try {
      const left = async () =>
        (await Promise.all(r.paths.map((p) => admin.children(p).catch(() => [])))).flat();
      await eventually(
        'no lock node is left',
        async () => (await left()).length === 0,
        scaled(5_000),
      );
    } finally {
      admin.close();
    }
  };

  /**
   * The holder held a lock on each of its sessions: the scenario breaks all of them. With one
   * session its two paths share it; with a pool each path has its own.
   */
  const expectOnEverySession = (r: FaultRun, worker: number, held: HeldSection[]): void => {
    const sessions = r.sessions[worker];
    const covered = new Set(held.map((h) => sessionIndexOf(h.path, sessions)));
    expect([...covered].sort((a, b) => a - b)).toEqual(
      Array.from({ length: sessions }, (_, i) => i),
    );
    expect(held).toHaveLength(r.paths.length);
  };

  /**
   * The holder's client told it of each lock of `held` lost, once, naming the lock's session,
   * and of no other lock; and each of its sessions went LOST.
   */
  const expectLossesReported = (r: FaultRun, worker: number, held: HeldSection[]): void => {
    const sessions = r.sessions[worker];
    const told = r.lost.filter((l) => l.worker === worker).map((l) => [l.path, l.session]);
    const expected = held.map((h) => [h.path, sessionIndexOf(h.path, sessions)]);
    expect(told.sort()).toEqual(expected.sort());
    expectEverySessionLost(r, worker);
  };

  const expectEverySessionLost = (r: FaultRun, worker: number): void => {
    const lost = r.sessionChanges
      .filter((c) => c.worker === worker && c.state === 'LOST')
      .map((c) => c.index);
    expect(new Set(lost)).toEqual(new Set(Array.from({ length: r.sessions[worker] }, (_, i) => i)));
  };

  /** What a figure keeps of the holder's sections and of the losses its client told. */
  const holderFigures = (r: FaultRun, ops: Record<string, unknown>[]) => ({
    holder: ops.map((op) => ({ path: op.path, result: op.result, events: op.events })),
    lossesTold: r.lost.filter((l) => l.worker === 0),
  });

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
    await expectNothingLeft(r);
  });

  it.each(SESSION_VARIANTS)(
    '1. leader SIGKILLed during contention, then restarted: no overlap, locks survive, locking resumes (sessions: %s)',
    async (_label, sessions) => {
      // Sessions outlive the election (a few seconds here), so held locks must survive it.
      const r = await startRun(`leader-kill-${sessions ?? 'default'}`, {
        sessionMs: 20_000,
        sessions,
      });
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
      await expectNothingLeft(r);
    },
  );

  it.each(SESSION_VARIANTS)(
    '5. a follower SIGSTOPped (half-dead) with clients on it: they move on before their sessions expire (sessions: %s)',
    async (_label, sessions) => {
      const sessionMs = 9_000;
      const r = await startRun(`member-pause-${sessions ?? 'default'}`, { sessionMs, sessions });
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
      await expectNothingLeft(r);
    },
  );

  it('4. a holder process SIGSTOPped past its session timeout, a lock on each of its sessions: others take them all, the woken holder writes nothing, each loss told', async () => {
    const sessionMs = 4_000;
    const r = await startRun('holder-pause', { sessionMs });
    await r.progress(50, 'before the fault');
    const held = await r.holdEveryPath(0, { type: 'pause-in-section' });
    r.workers[0].kill('SIGSTOP');
    r.phase = 'during';
    expectOnEverySession(r, 0, held);
    // The others go on, on each of the paused holder's paths, once its sessions have expired.
    const okOn = (path: string): number =>
      r.ops.filter((op) => op.path === path && op.result === 'ok').length;
    const before = held.map((h) => okOn(h.path));
    const deadline = Date.now() + scaled(120_000);
    while (held.some((h, i) => okOn(h.path) < before[i] + 20)) {
      if (Date.now() > deadline) throw new Error(`no progress on every path: ${r.summary()}`);
      await sleep(50);
    }
    r.workers[0].kill('SIGCONT');
    const ops = await Promise.all(held.map((h) => h.op));
    r.phase = 'after';
    await r.progress(50, 'after the resume');
    await r.stop();
    const report = r.report();
    figures[`4. holder SIGSTOP past its session${pooled(undefined)}`] = {
      ...report,
      ...holderFigures(r, ops),
    } as FaultReport;
    expectSafe(report);
    // Each assertHeld() threw before the write (or the store refused it): never accepted.
    for (const op of ops) {
      expect(['lost-before-write', 'stale-refused']).toContain(op.result);
      expect(op.signalAborted).toBe(true);
    }
    expectLossesReported(r, 0, held);
    await expectNothingLeft(r);
  });

  it.each([
    ['calls assertHeld() before its writes', false],
    ['writes without checking', true],
  ] as const)(
    '4b. a holder with a lock on each of its sessions whose event loop is blocked past its session timeout (busy CPU) %s: every lock lost and told, no write applied',
    async (_how, unchecked) => {
      const sessionMs = 4_000;
      const r = await startRun(unchecked ? 'holder-block-unchecked' : 'holder-block', {
        sessionMs,
      });
      await r.progress(50, 'before the fault');
      const held = await r.holdEveryPath(0, { type: 'block', ms: sessionMs * 3, unchecked });
      r.phase = 'during';
      expectOnEverySession(r, 0, held);
      const ops = await Promise.all(held.map((h) => h.op));
      r.phase = 'after';
      await r.progress(50, 'after the block');
      await r.stop();
      const report = r.report();
      const label = unchecked ? 'unchecked write' : 'assertHeld';
      figures[`4b. holder event loop blocked, ${label}${pooled(undefined)}`] = {
        ...report,
        ...holderFigures(r, ops),
      } as FaultReport;
      expectSafe(report);
      // Checked: assertHeld() throws at once after the block. Unchecked: the store refuses each
      // write, because another holder claimed the path with a newer token meanwhile.
      for (const op of ops) {
        expect(op.result).toBe(unchecked ? 'stale-refused' : 'lost-before-write');
      }
      expectLossesReported(r, 0, held);
      await expectNothingLeft(r);
    },
  );

  /**
   * A holder with a lock on each of its sessions lingers in its section while two members are
   * down for `outageMs`.
   */
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
    const held = await r.holdEveryPath(0, { type: 'linger', ms: lingerMs, until });
    expectOnEverySession(r, 0, held);
    const down = server.members.slice(0, 2);
    r.phase = 'during';
    await Promise.all(down.map((m) => m.stop()));
    await sleep(outageMs);
    down.forEach((m) => m.start());
    await server.waitForQuorum();
    const ops = await Promise.all(held.map((h) => h.op));
    r.phase = 'after';
    // The same client processes, no restart: they lock again.
    await r.progress(100, 'after quorum came back');
    await r.stop();
    const report = r.report();
    const waits = r.ops.filter((op) => op.result.startsWith('wait:'));
    figures[`${name}${pooled(undefined)}`] = {
      ...report,
      ...holderFigures(r, ops),
      slowestFailedWaitMs: Math.max(0, ...waits.map((op) => op.waitedMs ?? 0)),
    } as FaultReport;
    expectSafe(report);
    // A wait that fails says so with a documented error, within its wait: a request already
    // sent may take up to the request timeout (the session timeout) to be given up. Some do
    // fail: the holder lingers on every path longer than a wait, and quorum is lost meanwhile.
    expect(waits.length).toBeGreaterThan(0);
    for (const op of waits) {
      expect(DOCUMENTED_WAIT_OUTCOMES).toContain(op.result);
      expect(op.waitedMs).toBeLessThanOrEqual(waitMs + sessionMs + scaled(2_000));
    }
    await expectNothingLeft(r);
    return { r, held, ops };
  };

  it('3a. quorum lost for less than the session timeout: the holder keeps its lock on each of its sessions, waits fail clearly, all resumes', async () => {
    // The holder stays in its section until each lock was told 'reconnected' (seen failing on a
    // loaded machine with a fixed 4 s linger: quorum came back after the section had ended).
    const { r, ops } = await quorumLoss(
      '3a. quorum lost < session timeout',
      12_000,
      2_000,
      4_000,
      'reconnected',
    );
    // Each lock was told its ownership was unknown while no member could serve, then held again
    // before it wrote. After the write the settling ensemble may drop the client once more (seen
    // in CI: uncertain, reconnected, uncertain): that is not a loss, so only the write's view is
    // exact.
    for (const op of ops) {
      const events = op.events as string[];
      const atWrite = op.eventsAtWrite as string[];
      expect(atWrite[0]).toBe('uncertain');
      expect(atWrite[atWrite.length - 1]).toBe('reconnected');
      expect(events).not.toContain('lost');
      expect(op.result).toBe('ok');
      expect(op.signalAborted).toBe(false);
    }
    expect(r.lost.filter((l) => l.worker === 0)).toEqual([]);
  });

  it('3b. quorum lost for longer than the session timeout: the holder loses its lock on each of its sessions (signals abort, each loss told), writes nothing; every session of every contender is lost; all resumes', async () => {
    const sessionMs = 4_000;
    const { r, held, ops } = await quorumLoss(
      '3b. quorum lost > session timeout',
      sessionMs,
      sessionMs + 4_000,
      sessionMs + 6_000,
    );
    for (const op of ops) {
      expect(['lost-before-write', 'stale-refused']).toContain(op.result);
      expect(op.signalAborted).toBe(true);
      // Uncertain first, lost once the session timeout had passed.
      const events = op.events as string[];
      expect(events[0]).toBe('uncertain');
      expect(events[events.length - 1]).toBe('lost');
    }
    expectLossesReported(r, 0, held);
    // No member served for longer than the session timeout: each session of each pool is lost.
    r.workers.forEach((_, worker) => expectEverySessionLost(r, worker));
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
    const report = (figures[`2. rolling restart${pooled(undefined)}`] = r.report());
    expectSafe(report);
    // Released and closed: no lock node of ours is left (parents may linger until cleanup).
    await expectNothingLeft(r);
  });
});
