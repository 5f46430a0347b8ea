/**
 * The proof of leader election (`npm run test:faults`): a 3-node ensemble, 3 Nest
 * app instances as OS processes (fixtures/leader.app.ts) taking part in one election through
 * `@OnLeadershipGranted`/`@OnLeadershipRevoked`/`@LeaderElection`, and a fenced register in the
 * test process that every leader writes to with its fencing token (support/fenced-register.ts).
 * Pass/fail comes from the detectors (support/leadership-detector.ts: tokens never go down, no
 * two participants' accepted writes interleave or share a token, no write refused from an
 * instance that believed it led, no two tenures overlapping, each new leader's token above the
 * last) and from progress after each fault; every instance must end by itself on SIGTERM.
 * The two hand-over times are measured on the one monotonic clock and printed:
 * - a new leader after the leader is SIGKILLed: the server expires its session (its log says so),
 *   within the session timeout plus FAILOVER_MARGIN_MS (up to one tick late, then one
 *   notification and a grant; the margin is generous for a loaded machine and scales with it);
 * - the hand-over on a clean shutdown (SIGTERM, Nest app close): the leaving instance's node
 *   deletion, not an expiry: the server's log never says it expired the old leader's session.
 *   Its time (milliseconds, against the session timeout a crash costs) is a printed figure.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ZooKeeperServer } from '../support/zookeeper';
import { scaled } from '../support/time-scale';
import { ZkAdmin } from '../core/support/zk-admin';
import { monotonicMs } from './support/fenced-register';
import { AppInstance, waitUntil } from './support/app-instance';
import { ClusterOptions, LeaderCluster } from './support/leader-cluster';
import { ofKind } from './support/leadership-detector';
import { cronReport } from './support/cron-report';

const SESSION_MS = 5_000;
const FAILOVER_MARGIN_MS = scaled(3_000);
/** The instances' wall clocks disagree by seconds (and not by whole seconds). */
const CLOCK_OFFSETS_MS = [-3_300, 0, 3_600];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('leader election on a 3-node ensemble, 3 app instances as OS processes', () => {
  let server: ZooKeeperServer;
  let cluster: LeaderCluster | undefined;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    // The servers' own account of each session: they log the ones they expire.
    server = await ZooKeeperServer.start({
      size: 3,
      jvmFlags: ['-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.ZooKeeperServer=info'],
    });
  });

  afterEach(async () => {
    await cluster?.kill();
    cluster = undefined;
    for (const member of server.members) {
      member.resume();
      if (!member.running) member.start();
    }
    await server.waitForQuorum();
  });

  afterAll(async () => {
    console.log(`leader election proof figures:\n${JSON.stringify(figures, null, 2)}`);
    await server?.stop();
  });

  const startCluster = async (
    name: string,
    options: Partial<ClusterOptions> = {},
    count = 3,
  ): Promise<LeaderCluster> => {
    cluster = new LeaderCluster({
      connectionString: server.connectionString,
      electionPath: `/proof/${name}`,
      sessionMs: SESSION_MS,
      clockOffsetsMs: CLOCK_OFFSETS_MS,
      ...options,
    });
    await cluster.start(count);
    return cluster;
  };

  /** The hex id of the session whose election node under `electionPath` is `participant`'s. */
  const sessionOf = async (electionPath: string, participant: string): Promise<string> => {
    const admin = await ZkAdmin.connect(server.connectionString);
    try {
      const owners: string[] = [];
      for (const node of await admin.children(electionPath)) {
        const path = `${electionPath}/${node}`;
        if ((await admin.getData(path)) === participant)
          owners.push(await admin.ephemeralOwner(path));
      }
      expect(owners, `${participant}'s election nodes`).toHaveLength(1);
      return owners[0];
    } finally {
      admin.close();
    }
  };

  /** Whether a server of the ensemble (the leader tracks sessions) says it expired `id`. */
  const expiredByServer = (id: string): boolean =>
    server.members.some(
      (m) =>
        existsSync(m.logFile) &&
        readFileSync(m.logFile, 'utf8').includes(`Expiring session 0x${id},`),
    );

  /** Nothing found by the detectors, and every instance ends by itself on SIGTERM. */
  const expectCleanEnd = async (c: LeaderCluster): Promise<void> => {
    expect(c.violations()).toEqual([]);
    expect(await c.stop()).toEqual([]);
  };

  it('the detectors flag a deliberately broken run: two instances in two elections both lead', async () => {
    const c = await startCluster(
      'broken',
      { electionPath: ['/proof/broken-a', '/proof/broken-b'] },
      2,
    );
    await waitUntil(
      'writes refused from an instance that believed it led',
      () => ofKind(c.violations(), 'stale-believer').length >= 3,
    );
    const found = c.violations();
    figures['broken run (detector check)'] = {
      staleBelievers: ofKind(found, 'stale-believer').length,
      overlaps: ofKind(found, 'overlap').length,
    };
    expect(ofKind(found, 'stale-believer').length).toBeGreaterThanOrEqual(3);
    expect(ofKind(found, 'overlap').length).toBeGreaterThan(0);
    expect(await c.stop()).toEqual([]);
  });

  it('the leader SIGKILLed: the server expires its session, a new leader within the session timeout plus the margin, one at a time', async () => {
    const c = await startCluster('sigkill');
    const old = await c.oneLeader('a first leader');
    const oldSession = await sessionOf('/proof/sigkill', old.participant);
    await old.kill();
    const grant = await c.nextGrant(old.killedAt!, old.participant);
    const tookMs = grant.at - old.killedAt!;
    const next = await c.oneLeader('one leader after the kill');
    figures['new leader after SIGKILL (ms)'] = {
      measured: Math.round(tookMs),
      sessionTimeout: SESSION_MS,
      bound: SESSION_MS + FAILOVER_MARGIN_MS,
    };
    expect(next.participant).toBe(grant.participant);
    expect(tookMs).toBeLessThanOrEqual(SESSION_MS + FAILOVER_MARGIN_MS);
    // The server expired the dead leader's session (the clean shutdown's test checks it did not).
    expect(expiredByServer(oldSession)).toBe(true);
    await expectCleanEnd(c);
  });

  it('a clean shutdown (SIGTERM, Nest app close) hands leadership over by deleting its node, not by its session expiring', async () => {
    const c = await startCluster('shutdown');
    const old = await c.oneLeader('a first leader');
    const oldSession = await sessionOf('/proof/shutdown', old.participant);
    const sentAt = monotonicMs();
    const ended = await old.stop();
    const grant = await c.nextGrant(sentAt, old.participant);
    const [revoked] = c.reportsOf('revoked', old.participant);
    const handOverMs = grant.at - sentAt;
    figures['hand-over on SIGTERM (ms)'] = {
      sigtermToNewLeader: Math.round(handOverMs),
      oldRevokedToNewLeader: Math.round(grant.at - revoked.at),
      sessionTimeout: SESSION_MS,
    };
    expect(ended).toBe(true);
    expect(revoked.reason).toBe('closed');
    // The next leader was granted, and no server expired the old session: it left (its node
    // deleted, its session closed), as the SIGKILL test shows an expiry would be logged.
    expect(expiredByServer(oldSession)).toBe(false);
    await c.oneLeader('one leader after the hand-over');
    await expectCleanEnd(c);
  });

  it('the leader SIGSTOPped past its session: another leads; on SIGCONT its signal aborts, its late writes are refused', async () => {
    const c = await startCluster('sigstop');
    const old = await c.oneLeader('a first leader');
    // A job that checked its leadership and writes 200 ms later: the pause overtakes it.
    const job = await old.request('job', { ms: 200 });
    expect(job.started).toBe(true);
    old.pause();
    const pausedAt = monotonicMs();
    const grant = await c.nextGrant(pausedAt, old.participant);
    const next = await c.oneLeader('a new leader while the old one sleeps', 10);
    const firstOfNext = c.register.log.find(
      (e) => e.participant === next.participant && e.accepted,
    )!;
    const wokeAt = monotonicMs();
    old.resume();
    await waitUntil('the woken leader to report its signal aborted', () =>
      c.reportsOf('aborted', old.participant).some((r) => r.at >= wokeAt),
    );
    await waitUntil('the long job to write', () =>
      c.register.log.some((e) => e.participant === old.participant && e.kind === 'job'),
    );
    const aborted = c.reportsOf('aborted', old.participant).find((r) => r.at >= wokeAt)!;
    const late = c.register.log.filter(
      (e) => e.participant === old.participant && e.seq > firstOfNext.seq,
    );
    figures['leader SIGSTOPped past its session'] = {
      pausedMs: Math.round(wokeAt - pausedAt),
      newLeaderAfterPauseMs: Math.round(grant.at - pausedAt),
      signalAbortedAfterWakeMs: Math.round(aborted.at - wokeAt),
      abortReason: aborted.reason,
      lateWrites: late.map((e) => ({
        kind: e.kind,
        accepted: e.accepted,
        believedLeader: e.believedLeader,
      })),
    };
    expect(late.some((e) => e.kind === 'job')).toBe(true);
    expect(late.filter((e) => e.accepted)).toEqual([]);
    expect(c.reportsOf('revoked', old.participant).map((r) => r.reason)).toEqual(['lost']);
    // Woken, it takes part again (a new node, a new session): three participants.
    let who: Record<string, unknown> = {};
    await waitUntil(
      'the woken instance to take part again',
      async () => {
        who = await next.request('who');
        return (who.participants as string[]).includes(old.participant);
      },
      undefined,
      () => JSON.stringify(who),
    );
    await c.oneLeader('one leader after the wake');
    // What only the paused leader may show: its writes sent on waking before its signal
    // aborted were refused (stale-believer), and its tenure lasted (it slept) into the next.
    const found = c.violations();
    expect(found.filter((v) => v.participant !== old.participant && v.kind !== 'overlap')).toEqual(
      [],
    );
    expect(ofKind(found, 'overlap').every((v) => v.detail.includes(old.participant))).toBe(true);
    expect(found.filter((v) => !['stale-believer', 'overlap'].includes(v.kind))).toEqual([]);
    expect(await c.stop()).toEqual([]);
  });

  it('the ZooKeeper leader killed, then quorum lost: no second leader; quorum back: exactly one leader', async () => {
    const c = await startCluster('quorum');
    const first = await c.oneLeader('a first leader');
    const zkLeader = await server.leader();
    const zkLeaderKilledAt = monotonicMs();
    await zkLeader.kill();
    await server.leader(); // the two others elect one
    const old = await c.oneLeader('one leader after the ZooKeeper leader died');
    const grantsAfterZkLeader = c.reportsOf('granted', undefined, zkLeaderKilledAt).length;
    const second = server.members.find((m) => m.running)!;
    const lostAt = monotonicMs();
    await second.kill();
    // Past the session timeout the leader cannot know it still leads: its signal aborts.
    await waitUntil(
      'the leader to report its signal aborted',
      () => c.reportsOf('aborted', old.participant, lostAt).length > 0,
    );
    const abortedAt = c.reportsOf('aborted', old.participant, lostAt)[0].at;
    // An instance shut down meanwhile still ends by itself (its election cannot delete its node).
    const bystander = c.slots.find((i) => i !== old)!;
    const stopAt = monotonicMs();
    const bystanderEnded = await bystander.stop();
    const bystanderStopMs = monotonicMs() - stopAt;
    // And nobody else leads, however long quorum stays lost (at least a session timeout more).
    await sleep(Math.max(0, SESSION_MS - bystanderStopMs));
    const grantsWithoutQuorum = c.reportsOf('granted', undefined, lostAt);
    const firstWithoutQuorum = c.register.log.findIndex((e) => e.at >= lostAt);
    const writersWithoutQuorum =
      firstWithoutQuorum < 0 ? [] : c.register.writers(firstWithoutQuorum);
    const restoredFrom = monotonicMs();
    [zkLeader, second].forEach((m) => m.start());
    await server.waitForQuorum();
    const restoredAt = monotonicMs();
    const next = await c.oneLeader('exactly one leader once quorum is back');
    const [grant] = c.reportsOf('granted', next.participant, restoredAt);
    figures['ZooKeeper leader killed, then quorum lost (a second member killed)'] = {
      appLeaderMovedWhenZooKeeperLeaderDied: old !== first,
      grantsAfterZooKeeperLeaderDied: grantsAfterZkLeader,
      leaderSignalAbortedAfterQuorumLostMs: Math.round(abortedAt - lostAt),
      instanceStoppedWithoutQuorumEndedAfterMs: Math.round(bystanderStopMs),
      outageMs: Math.round(restoredFrom - lostAt),
      newLeaderAfterQuorumMs: grant ? Math.round(grant.at - restoredAt) : 'the same tenure',
    };
    expect(bystanderEnded).toBe(true);
    expect(grantsWithoutQuorum).toEqual([]);
    expect(writersWithoutQuorum.filter((p) => p !== old.participant)).toEqual([]);
    await expectCleanEnd(c);
  });

  it('a rolling restart of the app instances: never two leaders, a leader again after each', async () => {
    const c = await startCluster('rolling');
    let leader = await c.oneLeader('a first leader');
    // The leader first whenever it has not been restarted yet: leadership moves at each step.
    const left = [0, 1, 2];
    while (left.length) {
      const slot = left.includes(c.slots.indexOf(leader)) ? c.slots.indexOf(leader) : left[0];
      left.splice(left.indexOf(slot), 1);
      expect(await c.slots[slot].stop()).toBe(true);
      await c.startSlot(slot);
      leader = await c.oneLeader(`one leader after restarting instance ${slot + 1}`);
    }
    figures['rolling restart'] = {
      tenures: c.tenures().map((t) => t.participant),
    };
    await expectCleanEnd(c);
    const admin = await ZkAdmin.connect(server.connectionString);
    try {
      expect(await admin.children('/proof/rolling')).toEqual([]); // every instance left
    } finally {
      admin.close();
    }
  });

  it('@Cron every second under @LeaderElection, clocks offset by seconds: each firing runs once, on the leader, none skipped while one leads', async () => {
    const c = await startCluster('cron');
    const cronRuns = (who: AppInstance) =>
      c.register.log.filter((e) => e.kind === 'cron' && e.participant === who.participant);
    const runsOf = async (who: AppInstance, count: number) => {
      const from = cronRuns(who).length;
      await waitUntil(
        `${count} cron runs on ${who.participant}`,
        () => cronRuns(who).length >= from + count,
      );
    };
    let leader = await c.oneLeader('a first leader');
    await runsOf(leader, 4);
    // Hand over by a clean shutdown, then by a step-down.
    const slot = c.slots.indexOf(leader);
    expect(await leader.stop()).toBe(true);
    await c.startSlot(slot);
    leader = await c.oneLeader('a leader after the shutdown');
    await runsOf(leader, 4);
    await leader.request('step-down');
    leader = await c.oneLeader('a leader after the step-down');
    await runsOf(leader, 4);
    expect(await c.stop()).toEqual([]);
    const report = cronReport(c);
    figures['@Cron under @LeaderElection'] = report;
    expect(c.reportsOf('ran-without-leadership')).toEqual([]);
    expect(c.register.log.filter((e) => e.kind === 'cron' && !e.accepted)).toEqual([]);
    expect(report.duplicatedOrSkipped).toEqual([]);
    expect(report.leaderFiringsNotRun).toEqual([]);
    expect(report.handOverGapsBeyondWindow).toEqual([]);
    expect(report.tenures).toBeGreaterThanOrEqual(3);
    // Each instance's clock is off by its offset (to within the two clocks' reads), and the cron
    // library fires on the whole seconds of that clock: nearer to them than to the real clock's,
    // which are apart from them by the offset's fraction of a second (the offsets are not whole).
    for (const { participant, offsetMs, medianPhaseMs, medianRealPhaseMs } of report.clocks) {
      const slot = Number(/^app(\d+)\./.exec(participant)![1]) - 1;
      expect(Math.abs(offsetMs - CLOCK_OFFSETS_MS[slot]), participant).toBeLessThan(50);
      if (CLOCK_OFFSETS_MS[slot] % 1_000 !== 0) {
        expect(medianPhaseMs, participant).toBeLessThan(medianRealPhaseMs);
      }
    }
    expect(c.violations()).toEqual([]);
  });
});
