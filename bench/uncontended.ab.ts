/**
 * The engine's own cost on one path, isolated: in one process, blocks of five loops in turn
 * (each round starting one loop later), p50 of each as a ratio to the raw cycle's:
 * - raw: node-zookeeper-client's create + getChildren in one tick, then delete (raw-cycle);
 * - raw+tick: the same with one setImmediate between (a critical section's event-loop turn);
 * - lock: ZkLockClient acquire() then release();
 * - lock+tick: the same with one setImmediate between;
 * - lock+monitor: the same with the bench's monitored critical section (the uncontended row).
 *   ZK_CONNECT=127.0.0.1:2181 npx ts-node --transpile-only bench/uncontended.ab.ts [rounds]
 * First it prints each loop's client CPU per op, round by round, from a cold start: it falls
 * over the first ~2,000 ops of each loop as V8 optimizes the code (the warm-up the bench's
 * raw-cycle and uncontended rows get, bench/bench.options.ts); p50s count the rounds after it.
 * Then the p50 of each phase of an op (bench/socket-phases.ts): the client's JavaScript before,
 * between and after the two round trips, and the round trips themselves. Every loop's ops are
 * timed with the socket clock on (its cost falls on all alike).
 * A diagnostic beside `npm run bench` (bench/README.md "The uncontended row"), not a row of it.
 */
import { randomUUID } from 'node:crypto';
import { ZkLockClient } from '../lib/core';
import { ExclusionMonitor } from './exclusion.monitor';
import { percentile } from './latency.stats';
import { cycle } from './raw-baselines.scenario';
import { RawZkClient } from './raw-zk.client';
import { installSocketClock, phaseMedians, PHASES, timePhases } from './socket-phases';

const OPS_PER_BLOCK = 150;
/** Rounds whose blocks only warm up (not counted): 3,000 ops of each loop, as in the bench. */
const WARM_ROUNDS = 20;

async function main(): Promise<void> {
  const connectionString = process.env.ZK_CONNECT;
  if (!connectionString) throw new Error('Set ZK_CONNECT to a ZooKeeper on this machine');
  const rounds = Number(process.argv[2] ?? 40);
  if (!(rounds > WARM_ROUNDS))
    throw new Error(`rounds must be over the ${WARM_ROUNDS} warm-up rounds`);
  const root = `/bench-ab-${randomUUID().slice(0, 8)}`;
  const raw = await RawZkClient.connect(connectionString);
  await raw.mkdirp(`${root}/raw`);
  const locks = await ZkLockClient.connect({
    connectionString,
    namespace: `${root}/locks`,
    sessionTimeoutMs: 10_000,
  });
  const prefix = `_c_${randomUUID()}-lock-`;
  const monitor = new ExclusionMonitor();
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
  const rawCycle = (between?: () => Promise<void>) => cycle(raw, `${root}/raw`, prefix, between);
  const lockOp = async (path: string, between?: (token: bigint) => Promise<void>) => {
    const lock = await locks.acquire(path);
    try {
      await between?.(lock.fencingToken);
    } finally {
      await lock.release();
    }
  };
  const loops: [string, () => Promise<void>][] = [
    ['raw', () => rawCycle()],
    ['raw+tick', () => rawCycle(tick)],
    ['lock', () => lockOp('/a')],
    ['lock+tick', () => lockOp('/b', tick)],
    ['lock+monitor', () => lockOp('/c', (token) => monitor.critical('/c', token))],
  ];
  installSocketClock();
  const latencies = new Map<string, number[]>(loops.map(([loop]) => [loop, []]));
  const phases = new Map<string, number[][]>(loops.map(([loop]) => [loop, []]));
  const cpuPerOp = new Map<string, number[]>(loops.map(([loop]) => [loop, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (let turn = 0; turn < loops.length; turn++) {
        const [loop, op] = loops[(round + turn) % loops.length];
        const cpu = process.cpuUsage();
        for (let i = 0; i < OPS_PER_BLOCK; i++) {
          const started = process.hrtime.bigint();
          const phased = await timePhases(op);
          const us = Number(process.hrtime.bigint() - started) / 1e3;
          if (round < WARM_ROUNDS) continue;
          latencies.get(loop)!.push(us);
          if (phased) phases.get(loop)!.push(phased);
        }
        const { user, system } = process.cpuUsage(cpu);
        cpuPerOp.get(loop)!.push((user + system) / OPS_PER_BLOCK);
      }
    }
    console.log(
      `client CPU us per op, round by round (${OPS_PER_BLOCK} ops of each loop a round):`,
    );
    for (const [loop, us] of cpuPerOp) {
      console.log(`${loop.padEnd(13)} ${us.map((n) => n.toFixed(0)).join(' ')}`);
    }
    const base = percentile(latencies.get('raw')!, 50);
    for (const [loop, us] of latencies) {
      const p50 = percentile(us, 50);
      const p99 = percentile(us, 99).toFixed(0);
      const ratio = (p50 / base).toFixed(3);
      console.log(`${loop.padEnd(13)} p50 ${p50.toFixed(0)} us  ${ratio} x raw   p99 ${p99} us`);
    }
    console.log(`p50 of each phase, us (${PHASES.join(', ')}; ops left out):`);
    for (const [loop, ops] of phases) {
      const medians = phaseMedians(ops).map((us) => us.toFixed(1).padStart(6));
      const leftOut = latencies.get(loop)!.length - ops.length;
      console.log(`${loop.padEnd(13)} ${medians.join(' ')}  (${leftOut} left out)`);
    }
  } finally {
    await locks.close();
    await raw.removeRecursive(root).catch(() => undefined);
    raw.close();
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? String(error));
  process.exitCode = 1;
});
