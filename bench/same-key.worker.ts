/**
 * A worker process of the 4-process scenarios (same-key-4p: the mutex; rw-*-4p: the read/write
 * lock, 1 op in 10 a write or all writes): one ZkLockClient with several callers on one path, driven
 * by the parent over IPC (advanced serialization, so bigints cross as they are).
 *   parent -> { type: 'phase', phase: 'warmup' | 'run' }   worker -> { type: 'done', ... }
 *   parent -> { type: 'close' }                            worker exits when closed
 */
import type { ZkLockClient } from '../lib/core';
import { ExclusionMonitor, type MonitorSnapshot, snapshotOf } from './exclusion.monitor';
import { sendError, sendToParent, startWorker } from './worker-main';
import { runLockCallers, rwMode } from './lock-callers.runner';
import { processCpuMs } from './cpu.meter';

export interface WorkerConfig {
  connectionString: string;
  namespace: string;
  path: string;
  callers: number;
  warmupOpsPerCaller: number;
  opsPerCaller: number;
  /** What each op takes (default the mutex). */
  kind?: 'mutex' | 'rw-read-heavy' | 'rw-write-only';
}

export type ToWorker = { type: 'phase'; phase: 'warmup' | 'run' } | { type: 'close' };

export type FromWorker =
  | { type: 'ready' }
  | {
      type: 'done';
      phase: 'warmup' | 'run';
      latenciesMs: number[];
      monitor: MonitorSnapshot;
      cpuMs: number;
    }
  | { type: 'error'; message: string };

const send = (message: FromWorker): void => sendToParent(message);

async function main(config: WorkerConfig, client: ZkLockClient): Promise<void> {
  const monitor = new ExclusionMonitor();
  const pathOf = () => config.path;
  process.on('message', (message: ToWorker) => {
    if (message.type === 'close') {
      void client.close().finally(() => process.disconnect());
      return;
    }
    const { phase } = message;
    const opsPerCaller = phase === 'warmup' ? config.warmupOpsPerCaller : config.opsPerCaller;
    const kind = config.kind ?? 'mutex';
    const modeOf = kind === 'mutex' ? undefined : rwMode(kind);
    const plan = { callers: config.callers, opsPerCaller, pathOf, modeOf };
    processCpuMs(() => runLockCallers(client, plan, monitor)).then(
      ({ value: latenciesMs, cpuMs }) => {
        send({ type: 'done', phase, latenciesMs, monitor: snapshotOf(monitor), cpuMs });
      },
      sendError,
    );
  });
  send({ type: 'ready' });
}

startWorker<WorkerConfig>(main);
