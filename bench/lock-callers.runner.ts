/**
 * Concurrent callers taking locks through one ZkLockClient, each op = acquire, the monitored
 * critical section, release (through withLock, so each op is its own owner scope).
 * Shared by the in-process scenarios and the worker processes of same-key-4p.
 */
import type { ZkLockClient } from '../lib/core';
import { ExclusionMonitor } from './exclusion.monitor';
import { inParallel } from './workload.runner';

export interface CallersPlan {
  callers: number;
  opsPerCaller: number;
  /** The lock path of caller i. */
  pathOf(caller: number): string;
}

/** Runs the plan; returns one latency (ms) per op. Violations accumulate in `monitor`. */
export async function runLockCallers(
  client: ZkLockClient,
  plan: CallersPlan,
  monitor: ExclusionMonitor,
): Promise<number[]> {
  const latenciesMs: number[] = [];
  await inParallel(plan.callers, async (caller) => {
    const path = plan.pathOf(caller);
    for (let n = 0; n < plan.opsPerCaller; n++) {
      const started = process.hrtime.bigint();
      await client.withLock(path, (lock) => monitor.critical(path, lock.fencingToken));
      latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  });
  return latenciesMs;
}
