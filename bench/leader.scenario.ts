/**
 * Time to a new leader, on the monotonic clock all processes share; the bench
 * process is one participant, a worker process (leader.worker.ts) the other.
 * - leader-step-down: the bench leads, the worker waits (its watch on our node is set: the
 *   server's watch count says so); from our stepDown() call to the worker's 'isLeader'. Compared
 *   with raw-handoff of the same run (a delete and the watcher's notification).
 * - leader-crash: a worker leads, the bench waits; from the worker's SIGKILL to our 'isLeader'
 *   (the server expires the dead session, deletes its node, notifies us). Compared with the
 *   session timeout, LEADER_CRASH_SESSION_MS. The workers are forked up front, in parallel.
 * A new leader before the old one let go counts as a violation.
 */
import { join } from 'node:path';
import type { ZkLockClient } from '../lib/core';
import { LEADER_CRASH_SESSION_MS, ScenarioSize } from './bench.options';
import { settle, until, watchCount } from './handoff.scenario';
import type { FromLeaderWorker, LeaderWorkerConfig, ToLeaderWorker } from './leader.worker';
import { allReady, WorkerHandle } from './worker-process.handle';
import type { Workload } from './workload.runner';

export interface LeaderSetup {
  connectionString: string;
  namespace: string;
  locks: () => Promise<ZkLockClient>;
}

export interface LeaderWorkload extends Workload {
  close(): Promise<void>;
}

type Handle = WorkerHandle<FromLeaderWorker, ToLeaderWorker>;
const WORKER = join(__dirname, 'leader.worker.ts');

function forkWorker(setup: LeaderSetup, sessionTimeoutMs: number): Handle {
  const config: LeaderWorkerConfig = {
    connectionString: setup.connectionString,
    namespace: setup.namespace,
    sessionTimeoutMs,
  };
  return WorkerHandle.fork(WORKER, config);
}

export async function leaderStepDownWorkload(
  setup: LeaderSetup,
  size: ScenarioSize,
): Promise<LeaderWorkload> {
  const worker = forkWorker(setup, 10_000);
  const close = await allReady([worker]);
  const ours = (await setup.locks()).election('/leader-step-down', { participantId: 'bench' });
  let violations = 0;
  const once = async (): Promise<number> => {
    await ours.whenLeader();
    const watches = await watchCount(setup.connectionString);
    worker.send({ type: 'follow', path: '/leader-step-down' });
    await worker.next('armed');
    await until(async () => (await watchCount(setup.connectionString)) > watches);
    await settle();
    const t0 = process.hrtime.bigint();
    await ours.stepDown();
    const { ns } = await worker.next('got');
    if (ns < t0) violations++;
    return Number(ns - t0) / 1e6;
  };
  const closeAll = async () => {
    await ours.close();
    await close();
  };
  return oneAtATime(size, once, () => violations, closeAll);
}

export async function leaderCrashWorkload(
  setup: LeaderSetup,
  size: ScenarioSize,
): Promise<LeaderWorkload> {
  const count = size.warmupOpsPerCaller + size.opsPerCaller;
  const workers = Array.from({ length: count }, () => forkWorker(setup, LEADER_CRASH_SESSION_MS));
  const close = await allReady(workers);
  const locks = await setup.locks();
  let next = 0;
  let violations = 0;
  const once = async (): Promise<number> => {
    const path = `/leader-crash-${next}`;
    const worker = workers[next++];
    worker.send({ type: 'lead', path });
    await worker.next('leading');
    const ours = locks.election(path, { participantId: 'bench' });
    const watches = await watchCount(setup.connectionString);
    await ours.start();
    await until(async () => (await watchCount(setup.connectionString)) > watches);
    if (ours.isLeader) violations++;
    const t0 = process.hrtime.bigint();
    await worker.kill();
    await ours.whenLeader();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    await ours.close();
    return ms;
  };
  return oneAtATime(size, once, () => violations, close);
}

/** Two processes, one operation at a time: `once()` returns its latency in ms. */
function oneAtATime(
  size: ScenarioSize,
  once: () => Promise<number>,
  violations: () => number,
  close: () => Promise<void>,
): LeaderWorkload {
  return {
    callers: 2,
    processes: 2,
    close,
    async warmup() {
      for (let n = 0; n < size.warmupOpsPerCaller; n++) await once();
    },
    async run() {
      const latenciesMs: number[] = [];
      for (let n = 0; n < size.opsPerCaller; n++) latenciesMs.push(await once());
      return { latenciesMs, violations: violations() };
    },
  };
}
