/**
 * Ours / theirs per scenario, in one run, against the peer targets, met or not. A ratio is
 * only checked when both sides ran; a peer's row that failed or hung is shown as such.
 */
import { round } from './latency.stats';
import type { ScenarioName, ScenarioResult } from './bench.types';
import type { PeerName, PeerRow } from './peers.runner';
import { table } from './results.report';

type Results = Partial<Record<ScenarioName, ScenarioResult>>;

interface PeerTarget {
  scenario: ScenarioName;
  /** 'p50': ours / theirs latency, at most `limit`; 'rate': ours / theirs ops/s, at least. */
  measure: 'p50' | 'rate';
  /** Against one peer, or the faster of the two. */
  against: PeerName | 'faster';
  limit: number;
}

const TARGETS: PeerTarget[] = [
  { scenario: 'uncontended', measure: 'p50', against: 'curator', limit: 0.6 },
  { scenario: 'same-key-1p', measure: 'rate', against: 'curator', limit: 20 },
  { scenario: 'same-key-1p', measure: 'rate', against: 'kazoo', limit: 20 },
  // Past one session's limit, with the client's default options (several sessions).
  { scenario: 'many-keys', measure: 'rate', against: 'curator', limit: 1.5 },
  { scenario: 'rw-read-heavy', measure: 'rate', against: 'faster', limit: 1 },
  { scenario: 'semaphore-4', measure: 'rate', against: 'faster', limit: 1 },
  { scenario: 'multi-3', measure: 'rate', against: 'faster', limit: 1 },
];

/**
 * A peer's row measured in turn with ours in the same run (bench/run.order.ts PEER_ROWS), which
 * a target uses rather than the peer program's row run minutes later: `curator-many-keys`.
 */
function inTurn(
  ours: Results,
  peer: PeerName,
  scenario: ScenarioName,
): (PeerRow & { inTurn: true }) | undefined {
  const result = peer === 'curator' ? ours[`curator-${scenario}` as ScenarioName] : undefined;
  if (!result) return undefined;
  return { peer, scenario, opsPerSec: result.opsPerSec, p50Ms: result.p50Ms, inTurn: true };
}

export function peersTables(ours: Results, peers: PeerRow[]): string {
  const row = (peer: PeerName, scenario: string) =>
    peers.find((p) => p.peer === peer && p.scenario === scenario);
  const cell = (r: PeerRow | undefined, pick: (r: PeerRow) => number | undefined) =>
    !r ? '-' : r.error ? 'n/a' : String(pick(r) ?? '-');
  const scenarios = [...new Set(TARGETS.map((t) => t.scenario))];
  const results = table(
    [
      'scenario',
      'ours ops/s',
      'curator ops/s',
      'kazoo ops/s',
      'ours p50',
      'curator p50',
      'kazoo p50',
      'violations (ours/curator/kazoo)',
    ],
    scenarios.map((s) => {
      const [c, k] = [row('curator', s), row('kazoo', s)];
      return [
        s,
        String(ours[s]?.opsPerSec ?? '-'),
        cell(c, (r) => r.opsPerSec),
        cell(k, (r) => r.opsPerSec),
        String(ours[s]?.p50Ms ?? '-'),
        cell(c, (r) => r.p50Ms),
        cell(k, (r) => r.p50Ms),
        [
          ours[s]?.violations ?? '-',
          cell(c, (r) => r.violations),
          cell(k, (r) => r.violations),
        ].join(' / '),
      ];
    }),
  );
  const checks = TARGETS.flatMap((t) => {
    const mine = ours[t.scenario];
    const candidates = (t.against === 'faster' ? (['curator', 'kazoo'] as const) : [t.against])
      .map((p) => inTurn(ours, p, t.scenario) ?? row(p, t.scenario))
      .filter(
        (r): r is PeerRow & { inTurn?: true } => !!r && !r.error && r.opsPerSec !== undefined,
      );
    if (!mine || candidates.length === 0) return [];
    const theirs = candidates.reduce((a, b) => (b.opsPerSec! > a.opsPerSec! ? b : a));
    const value =
      t.measure === 'p50' ? mine.p50Ms / theirs.p50Ms! : mine.opsPerSec / theirs.opsPerSec!;
    const met = t.measure === 'p50' ? value <= t.limit : value >= t.limit;
    const what = t.measure === 'p50' ? 'p50 ours / theirs' : 'ops/s ours / theirs';
    return [
      [
        t.scenario,
        `${what} (${theirs.peer}${theirs.inTurn ? ', in turn' : ''})`,
        String(round(value, 2)),
        `${t.measure === 'p50' ? '<=' : '>='} ${t.limit}`,
        met ? 'yes' : 'NO',
      ],
    ];
  });
  const failed = peers.filter((p) => p.error).map((p) => `${p.peer} ${p.scenario}: ${p.error}`);
  return [
    results,
    checks.length
      ? table(['scenario', 'peer target', 'value', 'limit', 'met'], checks, [true, true])
      : '',
    failed.length ? `peer rows without a result:\n  ${failed.join('\n  ')}` : '',
  ]
    .filter(Boolean)
    .join('\n\n');
}
