import { scaled } from '../../support/time-scale';
import { LeaderCluster } from './leader-cluster';

/** The jobs fire every second. */
const PERIOD_MS = 1_000;

const median = (values: number[]): number =>
  Math.round(values.sort((x, y) => x - y)[values.length >> 1]);

/** How far `ms` (a time by some clock) is from that clock's nearest whole second. */
const fromWholeSecond = (ms: number): number => Math.abs(ms - Math.round(ms / 1000) * 1000);

/**
 * The @Cron checks: per tenure (participant + token), the firings' seconds by the leader's
 * clock go up by one (none run twice, none skipped); every firing the leader's undecorated twin
 * job saw while leading ran (except at the tenure's two edges, where leadership may change
 * between the two jobs' timers); between two tenures, no longer without a run than the time
 * without a leader plus two periods (the last run of one up to a period before its tenure ends,
 * the next one's first up to a period after its tenure starts: their clocks' seconds do not line
 * up) and a jitter for a loaded machine that scales with it.
 * A firing is one tick of the leader's own schedule: the instances' clocks disagree, so at a
 * hand-over the seconds by the wall clock jump (or go back) by the two clocks' difference while
 * in real time the job runs on, once a period. Only one instance runs at a time, whatever the
 * skew (run-once locks need `minHoldMs` above the skew for that; docs/design.md "Busy locks in
 * decorators (`onBusy`) and run-once jobs (`minHoldMs`)").
 */
export function cronReport(c: LeaderCluster) {
  const runs = c.register.log.filter((e) => e.kind === 'cron' && e.accepted);
  const byTenure = new Map<string, typeof runs>();
  for (const run of runs) {
    const key = `${run.participant} ${run.token}`;
    byTenure.set(key, [...(byTenure.get(key) ?? []), run]);
  }
  const duplicatedOrSkipped: string[] = [];
  const leaderFiringsNotRun: string[] = [];
  for (const [key, tenureRuns] of byTenure) {
    const labels = tenureRuns.map((r) => r.label!);
    for (let i = 1; i < labels.length; i++) {
      if (labels[i] !== labels[i - 1] + 1)
        duplicatedOrSkipped.push(`${key}: ${labels[i - 1]} then ${labels[i]}`);
    }
    const participant = key.split(' ')[0];
    const ticks = c
      .reportsOf('tick', participant)
      .filter(
        (t) =>
          t.leader &&
          (t.label as number) > labels[0] &&
          (t.label as number) < labels[labels.length - 1],
      );
    for (const t of ticks) {
      if (!labels.includes(t.label as number))
        leaderFiringsNotRun.push(`${participant} ${t.label}`);
    }
  }
  const tenures = c.tenures().sort((a, b) => a.from - b.from);
  const handOverGapsBeyondWindow: string[] = [];
  const gaps: { gapMs: number; leaderlessMs: number }[] = [];
  for (let i = 1; i < tenures.length; i++) {
    const [a, b] = [tenures[i - 1], tenures[i]];
    const lastOfA = runs
      .filter((r) => r.participant === a.participant && r.token === a.token)
      .pop();
    const firstOfB = runs.find((r) => r.participant === b.participant && r.token === b.token);
    if (!lastOfA || !firstOfB) continue;
    const gapMs = firstOfB.sentAt - lastOfA.sentAt;
    const leaderlessMs = Math.max(0, b.from - (a.to ?? b.from));
    gaps.push({ gapMs: Math.round(gapMs), leaderlessMs: Math.round(leaderlessMs) });
    if (gapMs > leaderlessMs + 2 * PERIOD_MS + scaled(1_000)) {
      handOverGapsBeyondWindow.push(
        `${a.participant} -> ${b.participant}: ${Math.round(gapMs)} ms`,
      );
    }
  }
  const clocks = [
    ...new Set(c.reports.filter((r) => r.type === 'tick').map((r) => r.participant)),
  ].map((participant) => {
    const ticks = c.reportsOf('tick', participant);
    return {
      participant,
      offsetMs: median(ticks.map((t) => (t.shiftedMs as number) - (t.realMs as number))),
      /** By the instance's own (offset) clock. */
      medianPhaseMs: median(ticks.map((t) => fromWholeSecond(t.shiftedMs as number))),
      /** By the real clock: as near as by its own only when the offset is whole seconds. */
      medianRealPhaseMs: median(ticks.map((t) => fromWholeSecond(t.realMs as number))),
    };
  });
  return {
    runs: runs.length,
    tenures: byTenure.size,
    handOverGaps: gaps,
    clocks,
    duplicatedOrSkipped,
    leaderFiringsNotRun,
    handOverGapsBeyondWindow,
  };
}
