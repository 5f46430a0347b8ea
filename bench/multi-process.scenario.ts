/**
 * same-key-4p and rw-*-4p: 4 worker processes x 8 callers on one path. Each process has its own
 * ZkLockClient (session); exclusion is checked across processes from the merged intervals.
 */
import { mergedViolations } from './exclusion.monitor';
import { allReady, WorkerHandle } from './worker-process.handle';
import type { ScenarioSize } from './bench.options';
import type { Workload } from './workload.runner';
import type { WorkerConfig } from './same-key.worker';

export interface MultiProcessConfig {
  connectionString: string;
  namespace: string;
  path: string;
  processes: number;
  kind?: WorkerConfig['kind'];
}

export interface MultiProcessWorkload extends Workload {
  /** Closes every worker's client and waits for the processes to exit. */
  close(): Promise<void>;
}

export async function multiProcessCallers(
  config: MultiProcessConfig,
  size: ScenarioSize,
): Promise<MultiProcessWorkload> {
  const workers = Array.from({ length: config.processes }, () =>
    WorkerHandle.spawn({
      connectionString: config.connectionString,
      namespace: config.namespace,
      path: config.path,
      callers: size.callers,
      warmupOpsPerCaller: size.warmupOpsPerCaller,
      opsPerCaller: size.opsPerCaller,
      kind: config.kind,
    }),
  );
  const close = await allReady(workers);
  const phase = async (name: 'warmup' | 'run') => {
    workers.forEach((w) => w.send({ type: 'phase', phase: name }));
    return Promise.all(workers.map((w) => w.next('done')));
  };
  return {
    callers: config.processes * size.callers,
    processes: config.processes,
    close,
    async warmup() {
      await phase('warmup');
    },
    async run() {
      const done = await phase('run');
      return {
        latenciesMs: done.flatMap((d) => d.latenciesMs),
        ...mergedViolations(done.map((d) => d.monitor)),
        clientCpuMs: done.reduce((sum, d) => sum + d.cpuMs, 0),
      };
    },
  };
}
