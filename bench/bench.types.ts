import { CLIENT_DEFAULTS } from '../lib/core/client/client-options';

/** Scenario names, as they appear in the table and in the JSON lines. */
export const SCENARIOS = [
  'raw-cycle',
  'raw-parallel',
  'raw-parallel-2s',
  'raw-parallel-4s',
  'raw-handoff',
  'local-mutex',
  'uncontended',
  'same-key-1p',
  'same-key-4p',
  'many-keys',
  'many-keys-1s',
  'many-keys-2s',
  'many-keys-4s',
  'curator-many-keys',
  'handoff',
  'leader-step-down',
  'leader-crash',
  'rw-read-heavy',
  'rw-write-only',
  'rw-read-heavy-4p',
  'rw-write-only-4p',
  'semaphore-4',
  'multi-3',
  'memory-10k',
  'fair-3p',
] as const;

export type ScenarioName = (typeof SCENARIOS)[number];

/**
 * The sessions (connections) a row spreads its callers over, where the row is about that:
 * `raw-parallel` is one session, its `-2s`/`-4s` rows split the 32 callers
 * over 2 or 4 raw connections; `many-keys` runs a client with the default options (option
 * `sessions` left out), `many-keys-1s`/`-2s`/`-4s` one with `sessions` 1, 2 or 4.
 */
export const SESSIONS_OF: Partial<Record<ScenarioName, number>> = {
  'raw-parallel': 1,
  'raw-parallel-2s': 2,
  'raw-parallel-4s': 4,
  'many-keys': CLIENT_DEFAULTS.sessions,
  'many-keys-1s': 1,
  'many-keys-2s': 2,
  'many-keys-4s': 4,
};

/** A row's sessions (SESSIONS_OF), `many-keys` at `manyKeys` when given (bench option --sessions). */
export function sessionsOf(name: ScenarioName, manyKeys?: number): number | undefined {
  return name === 'many-keys' && manyKeys !== undefined ? manyKeys : SESSIONS_OF[name];
}

/** The raw-parallel row with `sessions` sessions, the baseline of the many-keys rows. */
export function rawParallelWith(sessions: number): ScenarioName | undefined {
  const names = Object.keys(SESSIONS_OF) as ScenarioName[];
  return names.find((n) => n.startsWith('raw-parallel') && SESSIONS_OF[n] === sessions);
}

/** What one scenario measured. One JSON line per result with `--out`. */
export interface ScenarioResult {
  scenario: ScenarioName;
  /** Completed operations (a raw cycle, or acquire + release). */
  ops: number;
  /** Concurrent callers (loops) in all processes together. */
  callers: number;
  processes: number;
  /**
   * The ZooKeeper sessions the row's callers were spread over, where the row is
   * about that: the raw-parallel and many-keys rows.
   */
  sessions?: number;
  durationMs: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Mutual-exclusion violations seen while running (always 0 for raw scenarios). */
  violations: number;
  /** Where the violations came from (lock scenarios). */
  violationDetail?: { counter: number; overlaps: number; tokenRegressions: number };
  /** ZooKeeper packets received by the server (all members) per operation. */
  zkRequestsPerOp: number;
  /** ZooKeeper packets sent by the server per operation: replies plus watch notifications. */
  zkPacketsSentPerOp: number;
  /** CPU time of the client process(es) per operation, in microseconds. */
  clientCpuUsPerOp?: number;
  /** CPU time of the ZooKeeper server(s) per operation (only when the bench started them). */
  zkCpuUsPerOp?: number;
  /**
   * same-key-4p only: one caller per process, so every op is a handoff between processes
   * through ZooKeeper (no batching), at 2, 4 and 8 processes: requests/op must not grow with
   * the number of waiting processes.
   */
  herdProbe?: HerdProbePoint[];
  /** memory-10k only: the client's heap after two full collections, before and after. */
  heap?: { beforeBytes: number; afterBytes: number };
  /** fair-3p only: each process's grants and timeouts under the same overload. */
  fairShares?: FairShares;
}

/** How the grants of one path were shared between processes with the same load (fair-3p). */
export interface FairShares {
  /** Grants of each process, in process order. */
  grants: number[];
  /** Attempts of each process that ended in LockTimeoutError. */
  timeouts: number[];
  /** Each process's grants over all grants. */
  shares: number[];
  /** Jain's fairness index over the grants: (sum x)^2 / (n sum x^2), 1 when all are equal. */
  jainIndex: number;
}

/**
 * One point of the herd probe. With 2 processes a waiter always lists exactly one node ahead,
 * so when that node goes it knows it is first without listing again; from 3 processes on it
 * often lists more than one and re-lists once when its predecessor goes (one request, whatever
 * the number of waiters). So 2 processes cost about one request less per op than 4 or 8, and
 * the check compares 4 with 8.
 */
export interface HerdProbePoint {
  processes: number;
  zkRequestsPerOp: number;
  zkPacketsSentPerOp: number;
}

/** A lock scenario's result compared with its raw baseline from the same run. */
export interface TargetCheck {
  scenario: ScenarioName;
  description: string;
  /** The measured ratio or count, compared with `limit`. */
  value: number;
  limit: number;
  met: boolean;
}
