/**
 * `npm run bench`: the lock against the protocol's own limit, in one run. Starts its own
 * ZooKeeper unless ZK_CONNECT is set; opens, measures and closes each step's rows (which rows, in
 * what order and which in turn: bench/run.order.ts). See bench/README.md.
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
  sessionsOf,
} from './bench.types';
import { familyCallers } from './family-scenarios.scenario';
import { lockCallers } from './lock-scenarios.scenario';
import { machineSummary } from './machine.info';
import { ServerCpuMeter } from './cpu.meter';
import { MultiProcessConfig, multiProcessCallers } from './multi-process.scenario';
import { rawLoops } from './raw-baselines.scenario';
import { RawZkClient } from './raw-zk.client';
import { fairLine, herdLine, JsonLinesWriter, resultsTable, targetsTable } from './results.report';
import { checkTargets } from './targets.report';
import { curatorManyKeys } from './curator.workload';
import { runPeers } from './peers.runner';
import { peersTables } from './peers.report';
import { measureWorkload, Workload } from './workload.runner';
import { blocksOf, measureInTurn } from './in-turn.runner';
import { selectedRows, stepsOf } from './run.order';
import { handoffWorkload } from './handoff.scenario';
import { leaderCrashWorkload, leaderStepDownWorkload } from './leader.scenario';
import { localMutexCallers } from './local-mutex.scenario';
import { measureMemory } from './memory.scenario';
import { fairShareCallers } from './fair-share.scenario';
import { heapText } from './results.report';
import { ZkRequestCounter } from './zk-requests.counter';

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
    case 'raw-parallel-2s':
    case 'raw-parallel-4s':
    case 'uncontended':
    case 'many-keys':
    case 'many-keys-1s':
    case 'many-keys-2s':
    case 'many-keys-4s':
    case 'curator-many-keys': {
      const row = await openRow(name, ctx);
      try {
        return await measure(name, row.workload, ctx);
      } finally {
        await row.close();
      }
    }
    case 'same-key-1p':
      return measure(name, lockCallers(await ctx.locks(), `/${name}`, size, true), ctx);
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
    case 'fair-3p': {
      const setup = { connectionString: ctx.connectionString, namespace, path: `/${name}` };
      return measureThenClose(name, await fairShareCallers(setup, size), ctx);
    }
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
  return measureThenClose(name, await multiProcessCallers(config, size), ctx);
}

/** Measures a workload of processes of its own, and closes them (also if the bench fails). */
async function measureThenClose(
  name: ScenarioName,
  workload: Workload & { close(): Promise<void> },
  ctx: Context,
): Promise<ScenarioResult> {
  ctx.cleanup.unshift(() => workload.close());
  try {
    return await measure(name, workload, ctx);
  } finally {
    await workload.close();
  }
}

/** A row's workload, and a close() for what the row opened for itself (once, see closeOnce). */
interface OpenedRow {
  workload: Workload;
  close(): Promise<void>;
}

/**
 * The workload of a row that may run in turn with others (IN_TURN), with what it opens for
 * itself: raw-parallel-Ns n - 1 more raw sessions (with the bench's own), many-keys-Ns (and
 * many-keys with --sessions) a client of its own with that many sessions.
 */
async function openRow(name: ScenarioName, ctx: Context): Promise<OpenedRow> {
  const size = sizeOf(name, ctx.options.quick);
  const path = `${ctx.root}/${name}`;
  const nothing = () => Promise.resolve();
  switch (name) {
    case 'raw-cycle':
    case 'raw-parallel':
      return { workload: rawLoops([ctx.raw], path, size), close: nothing };
    case 'raw-parallel-2s':
    case 'raw-parallel-4s': {
      const connect = async () => {
        const session = await RawZkClient.connect(ctx.connectionString);
        return { session, close: closeOnce(ctx, () => session.close()) };
      };
      const more = await Promise.all(Array.from({ length: SESSIONS_OF[name]! - 1 }, connect));
      const sessions = [ctx.raw, ...more.map((m) => m.session)];
      return {
        workload: rawLoops(sessions, path, size),
        close: async () => {
          await Promise.all(more.map((m) => m.close()));
        },
      };
    }
    case 'uncontended':
      return { workload: lockCallers(await ctx.locks(), `/${name}`, size, true), close: nothing };
    case 'many-keys':
    case 'many-keys-1s':
    case 'many-keys-2s':
    case 'many-keys-4s': {
      if (name === 'many-keys' && ctx.options.sessions === undefined) {
        // The default options: the in-process scenarios' client.
        return {
          workload: lockCallers(await ctx.locks(), `/${name}`, size, false),
          close: nothing,
        };
      }
      const namespace = `${ctx.root}/locks`;
      const sessions = sessionsOf(name, ctx.options.sessions);
      const client = await connectLocks(ctx.connectionString, namespace, sessions);
      const close = closeOnce(ctx, () => client.close());
      return { workload: lockCallers(client, `/${name}`, size, false), close };
    }
    case 'curator-many-keys': {
      const peer = await curatorManyKeys(
        ctx.connectionString,
        `${ctx.root}/curator-in-turn`,
        size,
        ctx.options.quick,
      );
      return { workload: peer.workload, close: closeOnce(ctx, peer.close) };
    }
    default:
      throw new Error(`${name} is not a row that runs in turn`);
  }
}

/** `close`, run at most once: after its step, or by ctx.cleanup if the step failed or hung. */
function closeOnce(ctx: Context, close: () => Promise<void> | void): () => Promise<void> {
  let closing: Promise<void> | undefined;
  const once = () => (closing ??= Promise.resolve().then(close));
  ctx.cleanup.unshift(once);
  return once;
}

/**
 * A group's selected rows measured in turn (IN_TURN): every row opened first, before the
 * warm-ups, and closed after the last block.
 */
async function measureGroup(
  step: readonly ScenarioName[],
  ctx: Context,
): Promise<ScenarioResult[]> {
  const opened: OpenedRow[] = [];
  try {
    for (const name of step) opened.push(await openRow(name, ctx));
    const rows = step.map((scenario, i) => {
      const { opsPerCaller } = sizeOf(scenario, ctx.options.quick);
      return { scenario, workload: opened[i].workload, opsPerCaller };
    });
    const { processes, callers } = rows[0].workload;
    process.stderr.write(
      `[bench] ${step.join(' + ')}: ${processes} x ${callers / processes} callers, ` +
        `${blocksOf(rows)} blocks each...`,
    );
    const results = await measureInTurn(rows, ctx.counter, ctx.serverCpu);
    const lines = results.map((r) => `${r.scenario} ${r.opsPerSec} ops/s, p50 ${r.p50Ms} ms`);
    process.stderr.write(` ${lines.join('; ')}\n`);
    return results.map((result) => withSessions(result, ctx));
  } finally {
    for (const row of opened) await row.close();
  }
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
  return withSessions(result, ctx);
}

/** The sessions of a raw-parallel or many-keys row (sessionsOf, with --sessions), in its result. */
function withSessions(result: ScenarioResult, ctx: Context): ScenarioResult {
  const sessions = sessionsOf(result.scenario, ctx.options.sessions);
  return sessions === undefined ? result : { ...result, sessions };
}

async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  if (options.help) return void console.log(USAGE);
  const { only } = options;
  const selected = selectedRows(only, options.peers, options.sessions);
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
    for (const step of stepsOf(selected, options.sessions)) {
      const label = step.join(' + ');
      try {
        // Stretched on a loaded machine like the tests' deadlines (same-key-4p alone starts 18
        // worker processes): a scenario that hangs still fails, one that is slow does not.
        const rows = await withDeadline(
          label,
          scaled(options.quick ? 60_000 : 180_000),
          step.length > 1 ? measureGroup(step, ctx) : runScenario(step[0], ctx).then((r) => [r]),
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
    const fair = byName['fair-3p'];
    if (fair?.fairShares) console.log(fairLine(fair) + '\n');
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
