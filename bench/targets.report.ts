/**
 * The bench's targets, as ratios to the raw baselines measured in the same run.
 * A check is only made when both sides of its ratio ran.
 */
import { round } from './latency.stats';
import type { ScenarioName, ScenarioResult, TargetCheck } from './bench.types';
import { LEADER_CRASH_SESSION_MS } from './bench.options';

type Results = Partial<Record<ScenarioName, ScenarioResult>>;

function check(
  scenario: ScenarioName,
  description: string,
  value: number,
  limit: number,
  atMost: boolean,
): TargetCheck {
  const v = round(value, 2);
  return { scenario, description, value: v, limit, met: atMost ? v <= limit : v >= limit };
}

/** Handoffs per second a lock would reach if every handoff paid one raw cycle. */
function rawCycleRate(results: Results): number | undefined {
  const p50 = results['raw-cycle']?.p50Ms;
  return p50 ? 1000 / p50 : undefined;
}

/**
 * The reference for many-keys' client CPU per op: the engine at commit `b989b44` (one session,
 * its default then), warm. The median of 6 runs of
 * `npx ts-node --transpile-only bench/run.ts --only many-keys` on `b989b44` with this bench's
 * warm-up of 100 ops per caller, 2026-11-27, load 1.3-2.5: 115-162 us. Each run was followed by one of main's (lib unchanged since 594e500):
 * 77-98 us, median 92.5 (bench/README.md). The first figure, 197 us, was measured with 10
 * warm-up ops per caller, V8 still optimizing.
 */
export const MANY_KEYS_CLIENT_CPU_US_BEFORE_24 = 137;

/**
 * The limits the checks hold a run to, in one place: ratios to the raw baselines of the same run
 * (p50s, rates, heap growth), ZooKeeper requests per op, a client CPU ratio and a fairness index.
 * bench/README.md "Targets" gives each as a sentence.
 */
export const LIMITS = {
  uncontendedP50: 1.05,
  requestsPerOp: 3,
  sameKey1p: 20,
  sameKey4p: 3,
  herdGrowth: 0.5,
  manyKeys: 1.0,
  /** many-keys' client CPU per op over the reference at `b989b44` (MANY_KEYS_CLIENT_CPU_US_BEFORE_24). */
  manyKeysClientCpu: 0.8,
  readHeavy: 3,
  handoff: 1.2,
  leaderStepDown: 1.5,
  /** The server expires a session between one and about 1.25 timeouts (2 s, ticks of 500 ms). */
  leaderCrash: 1.5,
  heap: 1.05,
  /** Jain's index of the grants of 3 processes under the same overload. */
  fairness: 0.95,
} as const;

/**
 * many-keys at n sessions against raw-parallel over the same number of connections (32 paths
 * cost no more than the protocol on as many sessions), and the default client's CPU per op
 * against the reference at `b989b44`.
 */
function manyKeysChecks(results: Results): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const raws = Object.values(results).filter((r) => r?.scenario.startsWith('raw-parallel'));
  const rows = Object.values(results).filter((r) => r?.scenario.startsWith('many-keys'));
  for (const row of rows) {
    if (!row) continue;
    const raw = raws.find((r) => r?.sessions === row.sessions);
    if (raw) {
      const ratio = row.opsPerSec / raw.opsPerSec;
      const text = `ops/s / ${raw.scenario} ops/s`;
      checks.push(check(row.scenario, text, ratio, LIMITS.manyKeys, false));
    }
  }
  const cpu = results['many-keys']?.clientCpuUsPerOp;
  if (cpu !== undefined) {
    const ratio = cpu / MANY_KEYS_CLIENT_CPU_US_BEFORE_24;
    const text = `client CPU per op / at b989b44 (${MANY_KEYS_CLIENT_CPU_US_BEFORE_24} us)`;
    checks.push(check('many-keys', text, ratio, LIMITS.manyKeysClientCpu, true));
  }
  return checks;
}

export function checkTargets(results: Results): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const raw = results['raw-cycle'];
  const rate = rawCycleRate(results);
  const { uncontended, handoff } = results;
  const sameKey1 = results['same-key-1p'];
  const sameKey4 = results['same-key-4p'];
  if (uncontended && raw) {
    const ratio = uncontended.p50Ms / raw.p50Ms;
    checks.push(check('uncontended', 'p50 / raw-cycle p50', ratio, LIMITS.uncontendedP50, true));
  }
  if (uncontended) {
    // One decimal: the sessions' pings (one per session every few seconds) land in the count.
    const perOp = round(uncontended.zkRequestsPerOp, 1);
    checks.push(
      check('uncontended', 'ZooKeeper requests per op', perOp, LIMITS.requestsPerOp, true),
    );
  }
  checks.push(...manyKeysChecks(results));
  const rateText = 'ops/s / (1 / raw-cycle p50)';
  if (sameKey1 && rate) {
    checks.push(check('same-key-1p', rateText, sameKey1.opsPerSec / rate, LIMITS.sameKey1p, false));
  }
  if (sameKey4 && rate) {
    checks.push(check('same-key-4p', rateText, sameKey4.opsPerSec / rate, LIMITS.sameKey4p, false));
  }
  const readHeavy = results['rw-read-heavy-4p'];
  const writeOnly = results['rw-write-only-4p'];
  if (readHeavy && writeOnly) {
    const ratio = readHeavy.opsPerSec / writeOnly.opsPerSec;
    const text = 'ops/s / rw-write-only-4p ops/s (90 % reads)';
    checks.push(check('rw-read-heavy-4p', text, ratio, LIMITS.readHeavy, false));
  }
  const rawHandoff = results['raw-handoff'];
  if (handoff && rawHandoff) {
    const ratio = handoff.p50Ms / rawHandoff.p50Ms;
    const text = 'p50 / raw-handoff p50 (delete + notification)';
    checks.push(check('handoff', text, ratio, LIMITS.handoff, true));
  }
  const stepDown = results['leader-step-down'];
  if (stepDown && rawHandoff) {
    const ratio = stepDown.p50Ms / rawHandoff.p50Ms;
    const text = 'p50 / raw-handoff p50 (stepDown() to the next leader)';
    checks.push(check('leader-step-down', text, ratio, LIMITS.leaderStepDown, true));
  }
  const crash = results['leader-crash'];
  if (crash) {
    const ratio = crash.p50Ms / LEADER_CRASH_SESSION_MS;
    const text = `p50 / session timeout (${LEADER_CRASH_SESSION_MS} ms; SIGKILL to the next leader)`;
    checks.push(check('leader-crash', text, ratio, LIMITS.leaderCrash, true));
  }
  const heap = results['memory-10k']?.heap;
  if (heap) {
    const ratio = heap.afterBytes / heap.beforeBytes;
    checks.push(check('memory-10k', 'heap after / before', ratio, LIMITS.heap, true));
  }
  const fair = results['fair-3p']?.fairShares;
  if (fair) {
    const text = "Jain's index of grants per process, same overload";
    checks.push(check('fair-3p', text, fair.jainIndex, LIMITS.fairness, false));
  }
  // No herd: requests per op must not grow with the number of waiting processes. With a herd
  // every waiting node re-lists on each change, so 4 processes would cost more than 2. The probe
  // runs one caller per process, so each op is a handoff between processes (no batching).
  const probe = sameKey4?.herdProbe;
  if (probe && probe.length >= 2) {
    const [from, to] = probe.slice(-2);
    const growth = to.zkRequestsPerOp - from.zkRequestsPerOp;
    const text = `requests/op growth, ${from.processes} -> ${to.processes} processes x 1 caller (no herd)`;
    checks.push(check('same-key-4p', text, growth, LIMITS.herdGrowth, true));
  }
  for (const result of Object.values(results)) {
    if (result && !result.scenario.startsWith('raw-')) {
      checks.push(
        check(result.scenario, 'mutual-exclusion violations', result.violations, 0, true),
      );
    }
  }
  return checks;
}
