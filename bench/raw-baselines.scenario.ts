/**
 * The protocol's own cost, measured with node-zookeeper-client and no lock logic:
 * one cycle = `create` EPHEMERAL_SEQUENTIAL and `getChildren` sent in the same tick (one round
 * trip, pipelined), then `delete` (a second round trip). That is the least a ZooKeeper lock
 * can do for acquire + release.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { EPHEMERAL_SEQUENTIAL, RawZkClient } from './raw-zk.client';
import { inParallel, Workload } from './workload.runner';
import { processCpuMs } from './cpu.meter';
import type { ScenarioSize } from './bench.options';

/** Node data of about the size the lock writes (host and pid). */
const NODE_DATA = Buffer.from(JSON.stringify({ host: hostname(), pid: process.pid }));

/** One cycle under `parent`; `between` runs after the listing, before the delete (the A/B's tick). */
export async function cycle(
  client: RawZkClient,
  parent: string,
  prefix: string,
  between?: () => Promise<void>,
): Promise<void> {
  const [created] = await Promise.all([
    client.create(`${parent}/${prefix}`, NODE_DATA, EPHEMERAL_SEQUENTIAL),
    client.getChildren(parent),
  ]);
  await between?.();
  await client.remove(created);
}

/**
 * `size.callers` loops in parallel, each on its own parent under `root`. With one session they
 * share one session (as one ZkLockClient would): 1 caller = raw-cycle, 32 callers =
 * raw-parallel. With n (raw-parallel-2s, -4s), caller i runs on `sessions[i % n]`, so the
 * callers are split evenly over n sessions.
 */
export function rawLoops(
  sessions: readonly RawZkClient[],
  root: string,
  size: ScenarioSize,
): Workload {
  const parents = Array.from({ length: size.callers }, (_, i) => `${root}/p${i}`);
  const prefixes = parents.map(() => `_c_${randomUUID()}-lock-`);
  const loops = async (opsPerCaller: number, latenciesMs?: number[]) =>
    inParallel(size.callers, async (i) => {
      const client = sessions[i % sessions.length];
      for (let n = 0; n < opsPerCaller; n++) {
        const started = process.hrtime.bigint();
        await cycle(client, parents[i], prefixes[i]);
        latenciesMs?.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    });
  return {
    callers: size.callers,
    processes: 1,
    async warmup() {
      await Promise.all(parents.map((parent) => sessions[0].mkdirp(parent)));
      await loops(size.warmupOpsPerCaller);
    },
    async run(opsPerCaller = size.opsPerCaller) {
      const latenciesMs: number[] = [];
      const { cpuMs } = await processCpuMs(() => loops(opsPerCaller, latenciesMs));
      return { latenciesMs, violations: 0, clientCpuMs: cpuMs };
    },
  };
}
