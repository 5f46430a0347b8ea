import { cronReport } from './cron-report';
import { LeaderCluster } from './leader-cluster';

/** A cluster that never starts a process: its register and reports are filled by hand. */
function recorded(labels: number[], leaderTicks: number[]) {
  const c = new LeaderCluster({ connectionString: 'unused', electionPath: '/x', sessionMs: 1 });
  c.reports.push({ participant: 'a', type: 'granted', token: '1', at: 0 });
  for (const label of leaderTicks) {
    c.reports.push({ participant: 'a', type: 'tick', label, leader: true, at: label * 1000 });
  }
  for (const label of labels) {
    c.register.write({
      participant: 'a',
      token: 1n,
      kind: 'cron',
      believedLeader: true,
      sentAt: label * 1000,
      label,
    });
  }
  return cronReport(c);
}

describe('the @Cron checks of the leader-election proof', () => {
  it('find nothing when every firing of the tenure ran once', () => {
    const report = recorded([1, 2, 3, 4], [1, 2, 3, 4]);
    expect(report.duplicatedOrSkipped).toEqual([]);
    expect(report.leaderFiringsNotRun).toEqual([]);
  });

  it('flag a firing that ran twice and one that was skipped while this instance led', () => {
    const report = recorded([1, 2, 2, 4], [1, 2, 3, 4]);
    expect(report.duplicatedOrSkipped).toEqual(['a 1: 2 then 2', 'a 1: 2 then 4']);
    expect(report.leaderFiringsNotRun).toEqual(['a 3']);
  });
});
