/**
 * Latency of one handoff between processes, on the monotonic clock all processes
 * share: process A (the bench) lets go, process B (handoff.worker.ts) is told.
 * - raw-handoff, the protocol's floor: A deletes a node B watches; from A's delete call to the
 *   notification's arrival in B (one request plus one notification).
 * - handoff: A holds the lock and B waits in acquire() (its watch on A's node is set: the
 *   server's watch count says so); from A's release() call to B's grant.
 * Both wait for B's watch the same way (polling `mntr`), then 5 ms more, so that the server has
 * finished with the last poll when the timed part starts.
 * A grant in B before A's release started counts as a violation.
 */
import type { ZkLockClient } from '../lib/core';
import type { ScenarioSize } from './bench.options';
import type { FromHandoff, HandoffConfig, ToHandoff } from './handoff.worker';
import { PERSISTENT, RawZkClient } from './raw-zk.client';
import { WorkerHandle } from './worker-process.handle';
import type { Workload } from './workload.runner';
import { scaled } from '../test/support/time-scale';
import { mntr } from '../test/support/zookeeper';
import { serversOf } from './zk-requests.counter';
import { join } from 'node:path';

export interface HandoffSetup {
  connectionString: string;
  /** The lock client's namespace (B uses the same one). */
  namespace: string;
  /** An absolute path under which the raw nodes are made. */
  rawRoot: string;
  raw: RawZkClient;
  locks: () => Promise<ZkLockClient>;
}

export interface HandoffWorkload extends Workload {
  close(): Promise<void>;
}

type Handle = WorkerHandle<FromHandoff, ToHandoff>;

export async function handoffWorkload(
  mode: HandoffConfig['mode'],
  setup: HandoffSetup,
  size: ScenarioSize,
): Promise<HandoffWorkload> {
  const config: HandoffConfig = {
    connectionString: setup.connectionString,
    namespace: setup.namespace,
    mode,
  };
  const b: Handle = WorkerHandle.fork(join(__dirname, 'handoff.worker.ts'), config);
  const close = () => b.close();
  try {
    await b.next('ready');
  } catch (error) {
    await close();
    throw error;
  }
  const locks = mode === 'lock' ? await setup.locks() : undefined;
  let violations = 0;
  /** A holds what B will wait on: a node (raw) or the lock; `letGo` deletes or releases it. */
  const hold = async (n: number): Promise<{ path: string; letGo: () => Promise<void> }> => {
    if (mode === 'raw') {
      const path = await setup.raw.create(`${setup.rawRoot}/h-${n}`, Buffer.alloc(0), PERSISTENT);
      return { path, letGo: () => setup.raw.remove(path) };
    }
    const lock = await locks!.acquire('/handoff');
    return { path: '/handoff', letGo: () => lock.release() };
  };
  const once = async (n: number): Promise<number> => {
    const { path, letGo } = await hold(n);
    const watches = await watchCount(setup.connectionString);
    b.send({ type: 'arm', path });
    await b.next('armed');
    await until(async () => (await watchCount(setup.connectionString)) > watches);
    await settle();
    const t0 = process.hrtime.bigint();
    await letGo();
    const { ns } = await b.next('got');
    if (ns < t0) violations++;
    return Number(ns - t0) / 1e6;
  };
  let counter = 0;
  return {
    callers: 2,
    processes: 2,
    close,
    async warmup() {
      for (let n = 0; n < size.warmupOpsPerCaller; n++) await once(counter++);
    },
    async run() {
      const latenciesMs: number[] = [];
      for (let n = 0; n < size.opsPerCaller; n++) latenciesMs.push(await once(counter++));
      return { latenciesMs, violations };
    },
  };
}

/** Watches the servers hold (all members), from `mntr`. */
export async function watchCount(connectionString: string): Promise<number> {
  const counts = await Promise.all(
    serversOf(connectionString).map(async ({ port }) => (await mntr(port)).zk_watch_count ?? 0),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** A bench-only pause (no pass/fail depends on it): the last `mntr` poll is done with. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * Polls `condition` until it holds (10 s at most, times TEST_TIME_SCALE: B never queued
 * otherwise).
 */
export async function until(condition: () => Promise<boolean>): Promise<void> {
  const timeoutMs = scaled(10_000);
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`handoff: the waiting process set no watch in ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
