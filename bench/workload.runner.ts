/**
 * Runs one scenario's workload and turns it into a ScenarioResult: warm-up (not counted), then
 * the measured run between two `mntr` snapshots. measureRun and scenarioResult are shared with
 * measureInTurn (bench/in-turn.runner.ts), which measures a group of rows in blocks, in turn.
 */
import { percentile, round } from './latency.stats';
import type { FairShares, ScenarioName, ScenarioResult } from './bench.types';
import type { PacketCounts, ZkRequestCounter } from './zk-requests.counter';
import { totalViolations, type ViolationCounts } from './exclusion.monitor';
import { processCpuMs, type ServerCpuMeter } from './cpu.meter';
import type { ScenarioSize } from './bench.options';

export interface RunOutcome {
  /** One entry per completed operation, in milliseconds. */
  latenciesMs: number[];
  violations: number;
  detail?: ViolationCounts;
  /** CPU ms used by the client processes during the run. */
  clientCpuMs?: number;
  /** fair-3p: how the grants were shared between its processes. */
  fairShares?: FairShares;
}

export interface Workload {
  callers: number;
  processes: number;
  warmup(): Promise<void>;
  /**
   * The measured ops. `opsPerCaller` (raw and lock loops only; the others run their size)
   * overrides the size's, for a run in blocks: the violations then cover every run so far.
   */
  run(opsPerCaller?: number): Promise<RunOutcome>;
}

/** A timed run: its outcome, wall time, the servers' packet counts and CPU ms around it. */
export interface MeasuredRun {
  outcome: RunOutcome;
  durationMs: number;
  packets: PacketCounts;
  serverCpuMs?: number;
}

export async function measureWorkload(
  scenario: ScenarioName,
  workload: Workload,
  counter: ZkRequestCounter,
  serverCpu?: ServerCpuMeter,
): Promise<ScenarioResult> {
  await workload.warmup();
  return scenarioResult(scenario, workload, await measureRun(workload, counter, serverCpu));
}

/** One run of `workload` between two `mntr` snapshots and two reads of the servers' CPU. */
export async function measureRun(
  workload: Workload,
  counter: ZkRequestCounter,
  serverCpu?: ServerCpuMeter,
  opsPerCaller?: number,
): Promise<MeasuredRun> {
  const before = await counter.snapshot();
  const serverCpuBefore = serverCpu?.read();
  const started = process.hrtime.bigint();
  const outcome = await workload.run(opsPerCaller);
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
  const serverCpuAfter = serverCpu?.read();
  const after = await counter.snapshot();
  return {
    outcome,
    durationMs,
    packets: { received: after.received - before.received, sent: after.sent - before.sent },
    ...(serverCpuBefore !== undefined && serverCpuAfter !== undefined
      ? { serverCpuMs: serverCpuAfter - serverCpuBefore }
      : {}),
  };
}

export function scenarioResult(
  scenario: ScenarioName,
  workload: Workload,
  { outcome, durationMs, packets, serverCpuMs }: MeasuredRun,
): ScenarioResult {
  const ops = outcome.latenciesMs.length;
  const perOp = (n: number) => (ops === 0 ? 0 : round(n / ops, 2));
  return {
    scenario,
    ops,
    callers: workload.callers,
    processes: workload.processes,
    durationMs: round(durationMs, 1),
    opsPerSec: round((ops * 1000) / durationMs, 1),
    p50Ms: round(percentile(outcome.latenciesMs, 50)),
    p99Ms: round(percentile(outcome.latenciesMs, 99)),
    violations: outcome.violations,
    ...(outcome.detail ? { violationDetail: outcome.detail } : {}),
    zkRequestsPerOp: perOp(packets.received),
    zkPacketsSentPerOp: perOp(packets.sent),
    ...(outcome.clientCpuMs !== undefined
      ? { clientCpuUsPerOp: perOp(outcome.clientCpuMs * 1000) }
      : {}),
    ...(serverCpuMs !== undefined ? { zkCpuUsPerOp: perOp(serverCpuMs * 1000) } : {}),
    ...(outcome.fairShares ? { fairShares: outcome.fairShares } : {}),
  };
}

/** Runs `loop(i)` for i in 0..callers-1 concurrently. */
export async function inParallel(
  callers: number,
  loop: (i: number) => Promise<void>,
): Promise<void> {
  await Promise.all(Array.from({ length: callers }, (_, i) => loop(i)));
}

/**
 * An in-process workload: `size.callers` callers each running `op(caller, n)` in a loop, timed
 * per op; `violations()` is read once the run ended.
 */
export function opLoopWorkload(
  size: ScenarioSize,
  op: (caller: number, n: number) => Promise<void>,
  violations: () => ViolationCounts,
): Workload {
  const loop = async (opsPerCaller: number, latenciesMs: number[]): Promise<void> => {
    await inParallel(size.callers, async (caller) => {
      for (let n = 0; n < opsPerCaller; n++) {
        const started = process.hrtime.bigint();
        await op(caller, n);
        latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    });
  };
  return {
    callers: size.callers,
    processes: 1,
    warmup: () => loop(size.warmupOpsPerCaller, []),
    async run() {
      const latenciesMs: number[] = [];
      const { cpuMs } = await processCpuMs(() => loop(size.opsPerCaller, latenciesMs));
      const detail = violations();
      return { latenciesMs, violations: totalViolations(detail), detail, clientCpuMs: cpuMs };
    },
  };
}
