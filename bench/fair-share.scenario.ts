/**
 * fair-3p: three worker processes under the same overload on one path (300 concurrent
 * requests over three instances). Each caller asks `attemptsPerCaller` times with
 * a wait timeout shorter than the queue takes to drain, so some attempts time out; the row
 * reports each process's share of the grants and Jain's fairness index over them.
 */
import { join } from 'node:path';
import type { ScenarioSize } from './bench.options';
import type { FairShares } from './bench.types';
import { mergedViolations } from './exclusion.monitor';
import type { FairShareConfig, FromFairWorker, ToFairWorker } from './fair-share.worker';
import { round } from './latency.stats';
import { allReady, WorkerHandle } from './worker-process.handle';
import type { Workload } from './workload.runner';

const WORKER_FILE = join(__dirname, 'fair-share.worker.ts');

/** The overload: 3 x 100 callers, each holding 2 ms, giving up after 500 ms of waiting. */
export const FAIR_3P = { processes: 3, waitTimeoutMs: 500, holdMs: 2 } as const;

/** Jain's index of `xs`: 1 when all are equal, 1/n when one has everything. */
export function jainIndex(xs: readonly number[]): number {
  const sum = xs.reduce((a, b) => a + b, 0);
  const squares = xs.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (xs.length * squares);
}

export function fairShares(grants: readonly number[], timeouts: readonly number[]): FairShares {
  const total = grants.reduce((a, b) => a + b, 0);
  return {
    grants: [...grants],
    timeouts: [...timeouts],
    shares: grants.map((g) => round(total === 0 ? 0 : g / total, 3)),
    jainIndex: round(jainIndex(grants), 3),
  };
}

export interface FairShareWorkload extends Workload {
  close(): Promise<void>;
}

export async function fairShareCallers(
  setup: { connectionString: string; namespace: string; path: string },
  size: ScenarioSize,
): Promise<FairShareWorkload> {
  const config: FairShareConfig = {
    ...setup,
    callers: size.callers,
    attemptsPerCaller: size.opsPerCaller,
    waitTimeoutMs: FAIR_3P.waitTimeoutMs,
    holdMs: FAIR_3P.holdMs,
  };
  const workers = Array.from({ length: FAIR_3P.processes }, () =>
    WorkerHandle.fork<FromFairWorker, ToFairWorker>(WORKER_FILE, config),
  );
  const close = await allReady(workers);
  return {
    callers: FAIR_3P.processes * size.callers,
    processes: FAIR_3P.processes,
    close,
    // The overload itself is the measurement: a warm-up would only shift where it starts.
    warmup: () => Promise.resolve(),
    async run() {
      workers.forEach((w) => w.send({ type: 'run' }));
      const done = await Promise.all(workers.map((w) => w.next('done')));
      return {
        latenciesMs: done.flatMap((d) => d.latenciesMs),
        ...mergedViolations(done.map((d) => d.monitor)),
        clientCpuMs: done.reduce((sum, d) => sum + d.cpuMs, 0),
        fairShares: fairShares(
          done.map((d) => d.grants),
          done.map((d) => d.timeouts),
        ),
      };
    },
  };
}
