/**
 * `npm run bench`: the lock against the protocol's own limit, in one run. Starts its own
 * ZooKeeper unless ZK_CONNECT is set. See bench/README.md.
 */
import { randomUUID } from 'node:crypto';
import { ZkLockClient } from '../lib/core';
import { zooKeeperFromEnv, ZooKeeperServer } from '../test/support/zookeeper';
import { scaled } from '../test/support/time-scale';
import { BenchOptions, parseBenchArgs, ScenarioSize, sizeOf, USAGE } from './bench.options';
import {
  HerdProbePoint,
  SCENARIOS,
  SESSIONS_OF,
  ScenarioName,
  ScenarioResult,
  rawParallelWith,
} from './bench.types';
import { familyCallers } from './family-scenarios.scenario';
import { lockCallers } from './lock-scenarios.scenario';
import { machineSummary } from './machine.info';
import { ServerCpuMeter } from './cpu.meter';
import { MultiProcessConfig, multiProcessCallers } from './multi-process.scenario';
import { rawLoops } from './raw-baselines.scenario';
import { RawZkClient } from './raw-zk.client';
import { herdLine, JsonLinesWriter, resultsTable, targetsTable } from './results.report';
import { checkTargets } from './targets.report';
import { runPeers } from './peers.runner';
import { peersTables } from './peers.report';
import { measureWorkload, Workload } from './workload.runner';
import { blocksFor, measurePair } from './paired.runner';
import { handoffWorkload } from './handoff.scenario';
import { leaderCrashWorkload, leaderStepDownWorkload } from './leader.scenario';
import { localMutexCallers } from './local-mutex.scenario';
import { measureMemory } from './memory.scenario';
import { heapText } from './results.report';
import { ZkRequestCounter } from './zk-requests.counter';

/**
 * Each lock scenario runs right after its baseline, so both see the same machine load (raw-cycle
 * and uncontended even in alternating blocks, see PAIRED); `many-keys` (the default options) is
 * placed by runOrder() after the many-keys row with as many sessions.
 */
const RUN_ORDER: ScenarioName[] = [
  'raw-cycle',
  'uncontended',
  'raw-parallel',
  'many-keys-1s',
  'raw-parallel-2s',
  'many-keys-2s',
  'raw-parallel-4s',
  'many-keys-4s',
  'local-mutex',
  'same-key-1p',
  'same-key-4p',
  'raw-handoff',
  'handoff',
  'leader-step-down',
  'leader-crash',
  'rw-write-only',
  'rw-read-heavy',
  'rw-write-only-4p',
  'rw-read-heavy-4p',
  'semaphore-4',
  'multi-3',
  'memory-10k',
];

function runOrder(): ScenarioName[] {
  const order = [...RUN_ORDER];
  const sameSessions = order.findIndex(
    (n) => n.startsWith('many-keys') && SESSIONS_OF[n] === SESSIONS_OF['many-keys'],
  );
  order.splice(
    (sameSessions < 0 ? order.indexOf('many-keys-4s') : sameSessions) + 1,
    0,
    'many-keys',
  );
  return order;
}

/** The raw baseline a scenario's target is a ratio to: `--only` runs it too. */
const BASELINE: Partial<Record<ScenarioName, ScenarioName>> = {
  uncontended: 'raw-cycle',
  'same-key-1p': 'raw-cycle',
  'same-key-4p': 'raw-cycle',
  handoff: 'raw-handoff',
  'leader-step-down': 'raw-handoff',
};
for (const name of ['many-keys', 'many-keys-1s', 'many-keys-2s', 'many-keys-4s'] as const) {
  BASELINE[name] = rawParallelWith(SESSIONS_OF[name]!);
}

/**
 * uncontended's target is within 5 % of raw-cycle, less than the drift of a shared machine
 * between two rows run one after the other: when both are selected, measurePair runs them in
 * alternating blocks in one step (they are adjacent in RUN_ORDER).
 */
const PAIRED = ['raw-cycle', 'uncontended'] as const;

/** The selected rows in run order, one step each, PAIRED one step when both are selected. */
function stepsOf(selected: readonly ScenarioName[]): ScenarioName[][] {
  if (!PAIRED.every((name) => selected.includes(name))) return selected.map((name) => [name]);
  return selected.flatMap<ScenarioName[]>((name) =>
    name === PAIRED[0] ? [[...PAIRED]] : name === PAIRED[1] ? [] : [[name]],
  );
}

interface Context {
  options: BenchOptions;
  connectionString: string;
  root: string;
  raw: RawZkClient;
  /** The in-process scenarios' client, connected on first use. */
  locks: () => Promise<ZkLockClient>;
  counter: ZkRequestCounter;
  serverCpu: ServerCpuMeter;
  /** Run last-in first-out when the bench ends, also after a failed or hung scenario. */
  cleanup: Array<() => Promise<void> | void>;
}

/**
 * Herd probe: 1 caller per process, so each op is a handoff between processes. The check
 * compares the last two points; see HerdProbePoint for why 2 processes cost a request less.
 */
const HERD_PROBE_PROCESSES = [2, 4, 8];

async function runScenario(name: ScenarioName, ctx: Context): Promise<ScenarioResult> {
  const size = sizeOf(name, ctx.options.quick);
  const namespace = `${ctx.root}/locks`;
  switch (name) {
    case 'raw-cycle':
    case 'raw-parallel':
      return measure(name, rawLoops([ctx.raw], `${ctx.root}/${name}`, size), ctx);
    case 'raw-parallel-2s':
    case 'raw-parallel-4s': {
      // The bench's own session and n - 1 more, closed after the row.
      const more = await Promise.all(
        Array.from({ length: SESSIONS_OF[name]! - 1 }, () =>
          RawZkClient.connect(ctx.connectionString),
        ),
      );
      try {
        const sessions = [ctx.raw, ...more];
        return await measure(name, rawLoops(sessions, `${ctx.root}/${name}`, size), ctx);
      } finally {
        for (const session of more) session.close();
      }
    }
    case 'uncontended':
    case 'same-key-1p':
      return measure(name, lockCallers(await ctx.locks(), `/${name}`, size, true), ctx);
    case 'many-keys':
      return measure(name, lockCallers(await ctx.locks(), `/${name}`, size, false), ctx);
    case 'many-keys-1s':
    case 'many-keys-2s':
    case 'many-keys-4s': {
      // A client of its own with that many sessions, closed after the row.
      const client = await connectLocks(ctx.connectionString, namespace, SESSIONS_OF[name]);
      ctx.cleanup.unshift(() => client.close());
      try {
        return await measure(name, lockCallers(client, `/${name}`, size, false), ctx);
      } finally {
        await client.close();
      }
    }
    case 'local-mutex':
      return measure(name, localMutexCallers(size), ctx);
    case 'raw-handoff':
    case 'handoff': {
      const setup = {
        connectionString: ctx.connectionString,
        namespace,
        rawRoot: `${ctx.root}/raw-handoff`,
        raw: ctx.raw,
        locks: ctx.locks,
      };
      await ctx.raw.mkdirp(setup.rawRoot);
      const workload = await handoffWorkload(name === 'handoff' ? 'lock' : 'raw', setup, size);
      ctx.cleanup.unshift(() => workload.close());
      try {
        return await measure(name, workload, ctx);
      } finally {
        await workload.close();
      }
    }
    case 'leader-step-down':
    case 'leader-crash': {
      const setup = { connectionString: ctx.connectionString, namespace, locks: ctx.locks };
      const workload =
        name === 'leader-step-down'
          ? await leaderStepDownWorkload(setup, size)
          : await leaderCrashWorkload(setup, size);
      ctx.cleanup.unshift(() => workload.close());
      try {
        return await measure(name, workload, ctx);
      } finally {
        await workload.close();
      }
    }
    case 'rw-read-heavy-4p':
    case 'rw-write-only-4p': {
      const kind = name === 'rw-read-heavy-4p' ? 'rw-read-heavy' : 'rw-write-only';
      const config = { connectionString: ctx.connectionString, namespace, path: `/${name}` };
      return runProcesses(name, { ...config, processes: 4, kind }, size, ctx);
    }
    case 'memory-10k': {
      process.stderr.write(`[bench] ${name}: 1 x 32 callers, ${size.opsPerCaller} paths once...`);
      const paths = size.opsPerCaller;
      const result = await measureMemory(
        ctx.connectionString,
        `${ctx.root}/memory`,
        paths,
        ctx.counter,
      );
      process.stderr.write(` heap ${heapText(result)}\n`);
      return result;
    }
    case 'rw-read-heavy':
    case 'rw-write-only':
    case 'semaphore-4':
    case 'multi-3':
      return measure(name, familyCallers(await ctx.locks(), name, `/${name}`, size), ctx);
    case 'same-key-4p': {
      const config = { connectionString: ctx.connectionString, namespace, path: `/${name}` };
      const result = await runProcesses(name, { ...config, processes: 4 }, size, ctx);
      const probeSize = { ...size, callers: 1 };
      const sweep: HerdProbePoint[] = [];
      for (const processes of HERD_PROBE_PROCESSES) {
        const path = `/${name}-herd-${processes}`;
        const probe = await runProcesses(name, { ...config, path, processes }, probeSize, ctx);
        const { zkRequestsPerOp, zkPacketsSentPerOp } = probe;
        sweep.push({ processes, zkRequestsPerOp, zkPacketsSentPerOp });
      }
      return { ...result, herdProbe: sweep };
    }
  }
}

/** Worker processes x `size.callers` callers on one path (same-key-4p and its herd probe). */
async function runProcesses(
  name: ScenarioName,
  config: MultiProcessConfig,
  size: ScenarioSize,
  ctx: Context,
): Promise<ScenarioResult> {
  const workload = await multiProcessCallers(config, size);
  ctx.cleanup.unshift(() => workload.close());
  try {
    return await measure(name, workload, ctx);
  } finally {
    await workload.close();
  }
}

/** raw-cycle and uncontended with the sizes and paths of runScenario, in alternating blocks. */
async function measurePaired(ctx: Context): Promise<ScenarioResult[]> {
  const [rawName, lockName] = PAIRED;
  const rawSize = sizeOf(rawName, ctx.options.quick);
  const lockSize = sizeOf(lockName, ctx.options.quick);
  const blocks = blocksFor(Math.min(rawSize.opsPerCaller, lockSize.opsPerCaller));
  process.stderr.write(`[bench] ${rawName} + ${lockName}: 1 x 1 callers, ${blocks} blocks each...`);
  const results = await measurePair(
    [
      {
        scenario: rawName,
        workload: rawLoops([ctx.raw], `${ctx.root}/${rawName}`, rawSize),
        opsPerCaller: rawSize.opsPerCaller,
      },
      {
        scenario: lockName,
        workload: lockCallers(await ctx.locks(), `/${lockName}`, lockSize, true),
        opsPerCaller: lockSize.opsPerCaller,
      },
    ],
    ctx.counter,
    ctx.serverCpu,
  );
  const lines = results.map((r) => `${r.scenario} ${r.opsPerSec} ops/s, p50 ${r.p50Ms} ms`);
  process.stderr.write(` ${lines.join('; ')}\n`);
  return results;
}

async function measure(
  name: ScenarioName,
  workload: Workload,
  ctx: Context,
): Promise<ScenarioResult> {
  process.stderr.write(
    `[bench] ${name}: ${workload.processes} x ${workload.callers / workload.processes} callers...`,
  );
  const result = await measureWorkload(name, workload, ctx.counter, ctx.serverCpu);
  process.stderr.write(` ${result.opsPerSec} ops/s, p50 ${result.p50Ms} ms\n`);
  const sessions = SESSIONS_OF[name];
  return sessions === undefined ? result : { ...result, sessions };
}

async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  if (options.help) return void console.log(USAGE);
  const { only } = options;
  const selected = runOrder().filter((name) => !only || name === only || BASELINE[only] === name);
  const { connectionString, server } = await zooKeeperFromEnv();
  const cleanup: Array<() => Promise<void> | void> = [];
  if (server) cleanup.push(() => stopServer(server));
  try {
    const root = `/bench-${randomUUID().slice(0, 8)}`;
    const raw = await RawZkClient.connect(connectionString);
    cleanup.unshift(() => raw.close());
    cleanup.unshift(() => raw.removeRecursive(root).catch(() => undefined));
    let locks: Promise<ZkLockClient> | undefined;
    const lockClient = () => {
      if (!locks) {
        locks = connectLocks(connectionString, `${root}/locks`);
        const connected = locks;
        cleanup.unshift(() => connected.then((c) => c.close()).catch(() => undefined));
      }
      return locks;
    };
    const ctx: Context = {
      options,
      connectionString,
      root,
      raw,
      locks: lockClient,
      counter: new ZkRequestCounter(connectionString),
      cleanup,
      serverCpu: new ServerCpuMeter(server ? server.members.flatMap((m) => m.pid ?? []) : []),
    };
    await raw.mkdirp(`${root}/locks`);
    console.log(await machineSummary(connectionString, options.quick));
    // Warm the server's JIT first, so the first scenario does not pay for it.
    const warm = { callers: 8, opsPerCaller: 0, warmupOpsPerCaller: options.quick ? 20 : 150 };
    await rawLoops([raw], `${root}/warm`, warm).warmup();
    const byName: Partial<Record<ScenarioName, ScenarioResult>> = {};
    for (const step of stepsOf(selected)) {
      const label = step.join(' + ');
      try {
        // Stretched on a loaded machine like the tests' deadlines (same-key-4p alone starts 18
        // worker processes): a scenario that hangs still fails, one that is slow does not.
        const rows = await withDeadline(
          label,
          scaled(options.quick ? 60_000 : 180_000),
          step.length > 1 ? measurePaired(ctx) : runScenario(step[0], ctx).then((r) => [r]),
        );
        for (const row of rows) byName[row.scenario] = row;
      } catch (error) {
        process.stderr.write(`\n[bench] ${label} FAILED: ${(error as Error).stack ?? error}\n`);
        process.exitCode = 1;
      }
    }
    const results = SCENARIOS.flatMap((name) => byName[name] ?? []);
    const checks = checkTargets(byName);
    console.log('\n' + resultsTable(results) + '\n');
    if (checks.length > 0) console.log(targetsTable(checks) + '\n');
    const herd = results.find((r) => r.herdProbe)?.herdProbe;
    if (herd) console.log(herdLine(herd) + '\n');
    if (options.peers) {
      // Right after ours, against the same ZooKeeper, with the same sections and sizes.
      const peers = await runPeers(connectionString, `${root}/peers`, options.quick);
      console.log(peersTables(byName, peers) + '\n');
      if (peers.some((p) => (p.violations ?? 0) > 0)) process.exitCode = 1;
    }
    const out = new JsonLinesWriter(options.out);
    for (const result of results) {
      out.write({ ...result, targets: checks.filter((c) => c.scenario === result.scenario) });
    }
  } finally {
    for (const step of cleanup) await step();
  }
}

/** A scenario that hangs (a lock that is never granted) fails instead of blocking the run. */
function withDeadline<T>(name: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(`${name} did not finish within ${ms} ms: a lock was never granted or released`),
        ),
      ms,
    );
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** The in-process scenarios' client: the default options, or `sessions` sessions. */
function connectLocks(
  connectionString: string,
  namespace: string,
  sessions?: number,
): Promise<ZkLockClient> {
  return ZkLockClient.connect({
    connectionString,
    namespace,
    sessionTimeoutMs: 10_000,
    ...(sessions === undefined ? {} : { sessions }),
  });
}

async function stopServer(server: ZooKeeperServer): Promise<void> {
  await server.stop();
}

main().catch((error: Error) => {
  console.error(error.stack ?? String(error));
  process.exitCode = 1;
});
