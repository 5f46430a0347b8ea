/**
 * Concurrent callers taking locks through one ZkLockClient, each op = acquire, the monitored
 * critical section, release, as the scenarios are defined. (Bare acquire() never shares
 * ownership between callers, so concurrent callers of one path queue. withLock() would add an
 * AsyncLocalStorage scope per op: ~20 us on Node 20, see bench/README.md.)
 * Shared by the in-process scenarios and the worker processes of the 4-process scenarios.
 */
import type { ZkLockClient } from '../lib/core';
import { ExclusionMonitor, SectionMode } from './exclusion.monitor';
import { inParallel } from './workload.runner';

export interface CallersPlan {
  callers: number;
  opsPerCaller: number;
  /** The lock path of caller i. */
  pathOf(caller: number): string;
  /** Op n of caller i: the mutex (default), or a side of the read/write lock. */
  modeOf?(caller: number, n: number): SectionMode;
}

/** The read/write mix of the rw scenarios: 1 op in 10 writes (spread over callers), or all. */
export function rwMode(kind: 'rw-read-heavy' | 'rw-write-only') {
  return (caller: number, n: number): SectionMode =>
    kind === 'rw-write-only' || (caller + n) % 10 === 0 ? 'write' : 'read';
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
      const mode = plan.modeOf?.(caller, n) ?? 'exclusive';
      const lock = await (mode === 'exclusive'
        ? client.acquire(path)
        : mode === 'read'
          ? client.readLock(path).acquire()
          : client.writeLock(path).acquire());
      try {
        await monitor.critical(path, lock.fencingToken, mode);
      } finally {
        await lock.release();
      }
      latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  });
  return latenciesMs;
}
