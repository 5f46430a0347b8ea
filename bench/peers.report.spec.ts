import type { ScenarioName, ScenarioResult } from './bench.types';
import { peersTables } from './peers.report';
import type { PeerRow } from './peers.runner';

function result(scenario: ScenarioName, opsPerSec: number): ScenarioResult {
  const base = { ops: 100, callers: 32, processes: 1, durationMs: 100, violations: 0 };
  return {
    scenario,
    ...base,
    opsPerSec,
    p50Ms: 1,
    p99Ms: 2,
    zkRequestsPerOp: 3,
    zkPacketsSentPerOp: 3,
  };
}

const program: PeerRow[] = [{ peer: 'curator', scenario: 'many-keys', opsPerSec: 1000, p50Ms: 5 }];

describe('peersTables', () => {
  it("checks many-keys against the peer program's Curator row when nothing ran in turn", () => {
    const text = peersTables({ 'many-keys': result('many-keys', 1400) }, program);
    expect(text).toMatch(
      /many-keys \| ops\/s ours \/ theirs \(curator\) \| +1\.4 \| >= 1\.5 \| +NO/,
    );
  });

  it("checks many-keys against Curator's row measured in turn with ours when there is one", () => {
    const ours = {
      'many-keys': result('many-keys', 1400),
      'curator-many-keys': result('curator-many-keys', 700),
    };
    const text = peersTables(ours, program);
    expect(text).toMatch(
      /many-keys \| ops\/s ours \/ theirs \(curator, in turn\) \| +2 \| >= 1\.5 \| yes/,
    );
  });
});
