/**
 * The in-process lock scenarios on one ZkLockClient (one session):
 * uncontended (1 caller, one path), same-key-1p (32 callers, one path),
 * many-keys (32 callers, a path each).
 */
import type { ZkLockClient } from '../lib/core';
import { ExclusionMonitor, checkIntervals, totalViolations } from './exclusion.monitor';
import { runLockCallers } from './lock-callers.runner';
import { processCpuMs } from './cpu.meter';
import type { ScenarioSize } from './bench.options';
import type { Workload } from './workload.runner';

/** `size.callers` callers; `shared` = all on `path`, else caller i on `${path}/k${i}`. */
export function lockCallers(
  client: ZkLockClient,
  path: string,
  size: ScenarioSize,
  shared: boolean,
): Workload {
  const pathOf = (caller: number) => (shared ? path : `${path}/k${caller}`);
  const callers = size.callers;
  // One monitor for warm-up and every run: a violation during warm-up (or an earlier block of
  // measureInTurn's) is reported too.
  const monitor = new ExclusionMonitor();
  return {
    callers,
    processes: 1,
    async warmup() {
      await runLockCallers(
        client,
        { callers, opsPerCaller: size.warmupOpsPerCaller, pathOf },
        monitor,
      );
    },
    async run(opsPerCaller = size.opsPerCaller) {
      const { value: latenciesMs, cpuMs } = await processCpuMs(() =>
        runLockCallers(client, { callers, opsPerCaller, pathOf }, monitor),
      );
      const detail = { counter: monitor.counterViolations, ...checkIntervals(monitor.intervals) };
      return { latenciesMs, violations: totalViolations(detail), detail, clientCpuMs: cpuMs };
    },
  };
}
