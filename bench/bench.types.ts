/** Scenario names, as they appear in the table and in the JSON lines. */
export const SCENARIOS = [
  'raw-cycle',
  'raw-parallel',
  'uncontended',
  'same-key-1p',
  'same-key-4p',
  'many-keys',
] as const;

export type ScenarioName = (typeof SCENARIOS)[number];

/** What one scenario measured. One JSON line per result with `--out`. */
export interface ScenarioResult {
  scenario: ScenarioName;
  /** Completed operations (a raw cycle, or acquire + release). */
  ops: number;
  /** Concurrent callers (loops) in all processes together. */
  callers: number;
  processes: number;
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
   * through ZooKeeper (no batching), at 3 and then 8 processes: requests/op must not grow
   * with the number of waiting processes. (From 3 processes on, a waiter has more than one
   * node ahead when it lists, so it re-lists once when its predecessor goes; with exactly one
   * node ahead, as with 2 processes, it skips that, so 2 would look cheaper for that reason.)
   */
  herdProbe?: { from: HerdProbePoint; to: HerdProbePoint };
}

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
