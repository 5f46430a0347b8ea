/**
 * Concurrent callers taking locks through one ZkLockClient, each op = acquire, the monitored
 * critical section, release, as the issue defines the scenarios. (Bare acquire() never shares
 * ownership between callers, so concurrent callers of one path queue. withLock() would add an
 * AsyncLocalStorage scope per op: ~20 us on Node 20, see bench/README.md.)
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
      const lock = await client.acquire(path);
      try {
        await monitor.critical(path, lock.fencingToken);
      } finally {
        await lock.release();
      }
      latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  });
  return latenciesMs;
}
