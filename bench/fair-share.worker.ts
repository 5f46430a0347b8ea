/**
 * A worker process of fair-3p: one ZkLockClient whose callers all take one path with a wait
 * timeout, as an instance's requests do under overload; it counts its grants and timeouts.
 *   parent -> { type: 'run' }     worker -> { type: 'done', ... }
 *   parent -> { type: 'close' }   worker exits when closed
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LockTimeoutError, ZkLockClient } from '../lib/core';
import { processCpuMs } from './cpu.meter';
import { ExclusionMonitor, type MonitorSnapshot, snapshotOf } from './exclusion.monitor';
import { sendError, sendToParent, startWorker } from './worker-main';
import { inParallel } from './workload.runner';

export interface FairShareConfig {
  connectionString: string;
  namespace: string;
  path: string;
  callers: number;
  /** Each caller asks this many times: granted or timed out, one attempt each. */
  attemptsPerCaller: number;
  waitTimeoutMs: number;
  /** How long a holder keeps the lock (the request's work), beside the monitor's check. */
  holdMs: number;
}

export type ToFairWorker = { type: 'run' } | { type: 'close' };

export type FromFairWorker =
  | { type: 'ready' }
  | {
      type: 'done';
      grants: number;
      timeouts: number;
      latenciesMs: number[];
      monitor: MonitorSnapshot;
      cpuMs: number;
    }
  | { type: 'error'; message: string };

const send = (message: FromFairWorker): void => sendToParent(message);

async function attempts(client: ZkLockClient, config: FairShareConfig, monitor: ExclusionMonitor) {
  const latenciesMs: number[] = [];
  let timeouts = 0;
  await inParallel(config.callers, async () => {
    for (let n = 0; n < config.attemptsPerCaller; n++) {
      const started = process.hrtime.bigint();
      let lock;
      try {
        lock = await client.acquire(config.path, { waitTimeoutMs: config.waitTimeoutMs });
      } catch (error) {
        if (!(error instanceof LockTimeoutError)) throw error;
        timeouts++;
        continue;
      }
      try {
        await monitor.critical(config.path, lock.fencingToken);
        await sleep(config.holdMs);
      } finally {
        await lock.release();
      }
      latenciesMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  });
  return { latenciesMs, timeouts };
}

async function main(config: FairShareConfig, client: ZkLockClient): Promise<void> {
  const monitor = new ExclusionMonitor();
  process.on('message', (message: ToFairWorker) => {
    if (message.type === 'close') {
      void client.close().finally(() => process.disconnect());
      return;
    }
    processCpuMs(() => attempts(client, config, monitor)).then(
      ({ value: { latenciesMs, timeouts }, cpuMs }) => {
        const grants = latenciesMs.length;
        send({ type: 'done', grants, timeouts, latenciesMs, monitor: snapshotOf(monitor), cpuMs });
      },
      sendError,
    );
  });
  send({ type: 'ready' });
}

startWorker<FairShareConfig>(main);
