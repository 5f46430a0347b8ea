import type { ScenarioName, ScenarioResult } from './bench.types';
import { checkTargets, MANY_KEYS_CLIENT_CPU_US_BEFORE_24 } from './targets.report';
import { fairShares, jainIndex } from './fair-share.scenario';

function result(scenario: ScenarioName, fields: Partial<ScenarioResult>): ScenarioResult {
  const base = { ops: 100, callers: 1, processes: 1, durationMs: 100, opsPerSec: 1000 };
  return {
    scenario,
    ...base,
    p50Ms: 1,
    p99Ms: 2,
    violations: 0,
    zkRequestsPerOp: 3,
    zkPacketsSentPerOp: 3,
    ...fields,
  };
}

describe('checkTargets', () => {
  it('compares each lock scenario with its baseline from the same run', () => {
    const checks = checkTargets({
      'raw-cycle': result('raw-cycle', { p50Ms: 1 }),
      'raw-parallel': result('raw-parallel', { opsPerSec: 1000 }),
      uncontended: result('uncontended', { p50Ms: 1.2 }),
      'many-keys': result('many-keys', { opsPerSec: 900 }),
      'same-key-1p': result('same-key-1p', { opsPerSec: 2500, zkRequestsPerOp: 1 }),
      'same-key-4p': result('same-key-4p', {
        opsPerSec: 1100,
        zkRequestsPerOp: 6,
        violations: 1,
        herdProbe: [
          { processes: 2, zkRequestsPerOp: 4, zkPacketsSentPerOp: 5 },
          { processes: 4, zkRequestsPerOp: 5, zkPacketsSentPerOp: 8 },
          { processes: 8, zkRequestsPerOp: 6, zkPacketsSentPerOp: 9 },
        ],
      }),
    });
    const find = (scenario: string, text: string) =>
      checks.find((c) => c.scenario === scenario && c.description.includes(text));
    expect(find('uncontended', 'p50')).toMatchObject({ value: 1.2, met: false });
    expect(find('uncontended', 'requests')).toMatchObject({ value: 3, met: true });
    expect(find('many-keys', 'ops/s')).toMatchObject({ value: 0.9, met: false });
    expect(find('same-key-1p', 'ops/s')).toMatchObject({ value: 2.5, met: false });
    expect(find('same-key-4p', 'ops/s')).toMatchObject({ value: 1.1, met: false });
    expect(find('same-key-4p', 'no herd')).toMatchObject({ value: 1, met: false });
    expect(find('same-key-4p', 'violations')).toMatchObject({ value: 1, met: false });
  });

  it('checks the limits: read-heavy on 4 processes, handoff latency, heap, at their edges', () => {
    const checks = checkTargets({
      'raw-cycle': result('raw-cycle', { p50Ms: 1 }),
      uncontended: result('uncontended', { p50Ms: 1.05 }),
      'same-key-1p': result('same-key-1p', { opsPerSec: 20_000 }),
      'same-key-4p': result('same-key-4p', { opsPerSec: 2999 }),
      'rw-read-heavy-4p': result('rw-read-heavy-4p', { opsPerSec: 3000 }),
      'rw-write-only-4p': result('rw-write-only-4p', { opsPerSec: 1000 }),
      'raw-handoff': result('raw-handoff', { p50Ms: 0.5 }),
      handoff: result('handoff', { p50Ms: 0.61 }),
      'memory-10k': result('memory-10k', { heap: { beforeBytes: 100, afterBytes: 105 } }),
    });
    const find = (scenario: string, text: string) =>
      checks.find((c) => c.scenario === scenario && c.description.includes(text));
    expect(find('uncontended', 'p50')).toMatchObject({ value: 1.05, met: true });
    expect(find('same-key-1p', 'ops/s')).toMatchObject({ value: 20, met: true });
    expect(find('same-key-4p', 'ops/s')).toMatchObject({ value: 3, met: true }); // 2.999 rounds
    expect(find('rw-read-heavy-4p', 'ops/s')).toMatchObject({ value: 3, met: true });
    expect(find('handoff', 'p50')).toMatchObject({ value: 1.22, met: false });
    expect(find('memory-10k', 'heap')).toMatchObject({ value: 1.05, met: true });
  });

  it('pairs many-keys with raw-parallel over as many sessions, and checks its client CPU', () => {
    const before = MANY_KEYS_CLIENT_CPU_US_BEFORE_24;
    const checks = checkTargets({
      'raw-parallel': result('raw-parallel', { sessions: 1, opsPerSec: 1000 }),
      'raw-parallel-2s': result('raw-parallel-2s', { sessions: 2, opsPerSec: 1500 }),
      'raw-parallel-4s': result('raw-parallel-4s', { sessions: 4, opsPerSec: 2000 }),
      'many-keys': result('many-keys', {
        sessions: 2,
        opsPerSec: 1500,
        clientCpuUsPerOp: before * 0.81,
      }),
    });
    const find = (scenario: string, text: string) =>
      checks.find((c) => c.scenario === scenario && c.description.includes(text));
    expect(find('many-keys', 'ops/s')).toMatchObject({
      description: 'ops/s / raw-parallel-2s ops/s',
      value: 1,
      met: true,
    });
    expect(find('many-keys', 'client CPU')).toMatchObject({ value: 0.81, limit: 0.8, met: false });
    expect(checks.filter((c) => c.description.includes('raw-parallel'))).toHaveLength(1);
  });

  it('makes no ratio check when the baseline did not run (--only)', () => {
    const checks = checkTargets({ uncontended: result('uncontended', {}) });
    expect(checks.map((c) => c.description)).toEqual([
      'ZooKeeper requests per op',
      'mutual-exclusion violations',
    ]);
  });
});

describe('fair-3p', () => {
  it("reports each process's share and Jain's index, and checks the index against 0.95", () => {
    const unfair = fairShares([41, 402, 295], [459, 98, 205]);
    expect(unfair.shares).toEqual([0.056, 0.545, 0.4]);
    expect(unfair.jainIndex).toBe(0.725);
    expect(jainIndex([10, 10, 10])).toBe(1);
    expect(jainIndex([30, 0, 0])).toBeCloseTo(1 / 3);
    const checks = checkTargets({ 'fair-3p': result('fair-3p', { fairShares: unfair }) });
    expect(checks.find((c) => c.description.includes('Jain'))).toMatchObject({
      value: 0.73,
      limit: 0.95,
      met: false,
    });
  });
});
