/**
 * many-keys against Curator, in turn: rounds of ours at 1 session, ours at 4 sessions (the
 * default) and Curator's many-keys (bench/peers/CuratorBench.java, its one CuratorFramework), in
 * an order that rotates each round, each 32 callers on 32 paths, 100 warm-up ops and 100 measured
 * ops per caller (Curator's sizes), against one ZooKeeper this script starts. In
 * `npm run bench -- --peers` Curator runs minutes after our rows, and ours runs in blocks beside
 * raw-parallel-4s; here the three run tens of seconds apart (Curator's program runs its
 * uncontended and same-key-1p rows first, in a new JVM each round).
 *   npx ts-node --transpile-only bench/many-keys-curator.ab.ts [rounds]
 * Per row: ops/s, ZooKeeper's CPU per op (/proc, 10 ms ticks) and, for ours, the client's.
 * Curator's window is its row's duration, ending when its line is read (sampled every 20 ms):
 * short (under a second), so its CPU figure is rough.
 * A diagnostic beside `npm run bench` (bench/README.md "Fair warm-ups"), not a row of it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ZkLockClient } from '../lib/core';
import { curatorClasspath } from '../test/support/peers';
import { ZooKeeperServer } from '../test/support/zookeeper';
import { ServerCpuMeter } from './cpu.meter';
import { checkIntervals, ExclusionMonitor, totalViolations } from './exclusion.monitor';
import { runLockCallers } from './lock-callers.runner';

const CALLERS = 32;
const OPS_PER_CALLER = 100;

async function ours(connectionString: string, zk: ServerCpuMeter, sessions: number, tag: string) {
  const client = await ZkLockClient.connect({
    connectionString,
    namespace: `/ab-${tag}`,
    sessionTimeoutMs: 10_000,
    sessions,
  });
  const plan = (opsPerCaller: number) => ({
    callers: CALLERS,
    opsPerCaller,
    pathOf: (caller: number) => `/k${caller}`,
  });
  const monitor = new ExclusionMonitor();
  try {
    await runLockCallers(client, plan(100), monitor);
    const [zkBefore, cpuBefore, started] = [zk.read()!, process.cpuUsage(), Date.now()];
    await runLockCallers(client, plan(OPS_PER_CALLER), monitor);
    const ms = Date.now() - started;
    const [zkMs, cpu] = [zk.read()! - zkBefore, process.cpuUsage(cpuBefore)];
    const ops = CALLERS * OPS_PER_CALLER;
    const detail = { counter: monitor.counterViolations, ...checkIntervals(monitor.intervals) };
    console.log(
      `ours ${sessions} session(s): ${Math.round((ops / ms) * 1000)} ops/s, ZooKeeper ` +
        `${Math.round((zkMs * 1000) / ops)} us/op, client ${Math.round((cpu.user + cpu.system) / ops)} us/op, ` +
        `violations ${totalViolations(detail)}`,
    );
    return (ops / ms) * 1000;
  } finally {
    await client.close();
  }
}

interface CuratorRow {
  ops: number;
  opsPerSec: number;
  violations: number;
  error?: string;
}

/** Curator's whole peer program; measured: its many-keys row (window from the row's duration). */
async function curator(connectionString: string, zk: ServerCpuMeter, tag: string) {
  const samples: Array<[number, number]> = [];
  const sampler = setInterval(() => samples.push([Date.now(), zk.read()!]), 20);
  const source = join(__dirname, 'peers', 'CuratorBench.java');
  const args = ['-cp', curatorClasspath(), source, connectionString, `/ab-${tag}`, 'full', '60'];
  const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const row = await new Promise<CuratorRow>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`Curator exited (${code}) before many-keys`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!line.startsWith('{"scenario":"many-keys"')) return;
        const parsed = JSON.parse(line) as CuratorRow;
        if (parsed.error) reject(new Error(`Curator's many-keys failed: ${parsed.error}`));
        else resolve(parsed);
      });
    });
    const end = Date.now();
    const start = end - (row.ops / row.opsPerSec) * 1000;
    const near = (t: number) =>
      samples.reduce((a, b) => (Math.abs(b[0] - t) < Math.abs(a[0] - t) ? b : a))[1];
    console.log(
      `curator: ${Math.round(row.opsPerSec)} ops/s, ZooKeeper ` +
        `${Math.round(((near(end) - near(start)) * 1000) / row.ops)} us/op, violations ${row.violations}`,
    );
    return row.opsPerSec;
  } finally {
    clearInterval(sampler);
    child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 3);
  const server = await ZooKeeperServer.start();
  const zk = new ServerCpuMeter(server.members.map((m) => m.pid!));
  try {
    for (let round = 0; round < rounds; round++) {
      let four = 0;
      let theirs = 0;
      const sides = [
        async () => void (await ours(server.connectionString, zk, 1, `one-${round}`)),
        async () => (four = await ours(server.connectionString, zk, 4, `four-${round}`)),
        async () => (theirs = await curator(server.connectionString, zk, `curator-${round}`)),
      ];
      for (let i = 0; i < sides.length; i++) await sides[(round + i) % sides.length]();
      console.log(
        `round ${round + 1}: ours (4 sessions) / Curator = ${(four / theirs).toFixed(2)}`,
      );
    }
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
