/**
 * Curator's many-keys as a row of ours, `curator-many-keys` (with `--peers`): the peer program
 * bench/peers/CuratorBench.java in its `serve` mode, one JVM and one CuratorFramework (as users
 * run it) that runs a block of ops per command. So it is measured in turn with our many-keys
 * rows (bench/in-turn.runner.ts), blocks apart, not minutes after them: on this shared machine
 * the load drifts between the two by more than the 1.5 x target's margin (bench/README.md).
 * Its client CPU is the JVM's (all its threads: callers, Curator's, JIT and GC).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { curatorClasspath } from '../test/support/peers';
import type { ScenarioSize } from './bench.options';
import { ServerCpuMeter } from './cpu.meter';
import type { RunOutcome, Workload } from './workload.runner';

/**
 * Warm-up ops per caller: a JVM compiles its hot code after thousands of calls. The peer program
 * runs uncontended and same-key-1p (~21,000 lock ops) before its many-keys row; this is about as
 * many (32 x 600), against our row's 100 per caller (V8 is warm after fewer).
 */
const JVM_WARMUP_OPS_PER_CALLER = 600;

interface Reply {
  ready?: boolean;
  violations?: number;
  latenciesUs?: number[];
  error?: string;
}

export async function curatorManyKeys(
  connectionString: string,
  root: string,
  size: ScenarioSize,
  quick: boolean,
): Promise<{ workload: Workload; close: () => Promise<void> }> {
  const source = join(__dirname, 'peers', 'CuratorBench.java');
  const child = spawn(
    'java',
    ['-cp', curatorClasspath(), source, connectionString, root, 'serve'],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + String(chunk)).slice(-4000)));
  const exited = once(child, 'exit');
  const waiting: Array<{ resolve: (r: Reply) => void; reject: (e: Error) => void }> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) waiting.shift()?.resolve(JSON.parse(line) as Reply);
  });
  void exited.then(([code]) => {
    const error = new Error(`the Curator peer exited (${String(code)}): ${stderr.trim()}`);
    for (const w of waiting.splice(0)) w.reject(error);
  });
  const next = (): Promise<Reply> =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null) reject(new Error(`the Curator peer exited: ${stderr.trim()}`));
      else waiting.push({ resolve, reject });
    });
  const ask = async (opsPerCaller: number): Promise<Reply> => {
    const reply = next();
    child.stdin.write(`${opsPerCaller}\n`);
    const answer = await reply;
    if (answer.error) throw new Error(`Curator's many-keys failed: ${answer.error}`);
    return answer;
  };
  // {"ready":true} once connected; a JVM that cannot start or connect fails the row.
  const ready = setTimeout(() => child.kill('SIGKILL'), 120_000);
  try {
    await next();
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(ready);
  }
  const cpu = new ServerCpuMeter(child.pid === undefined ? [] : [child.pid]);
  const workload: Workload = {
    callers: size.callers,
    processes: 1,
    warmup: async () => {
      await ask(quick ? size.warmupOpsPerCaller : JVM_WARMUP_OPS_PER_CALLER);
    },
    run: async (opsPerCaller = size.opsPerCaller): Promise<RunOutcome> => {
      const before = cpu.read();
      const reply = await ask(opsPerCaller);
      const after = cpu.read();
      return {
        latenciesMs: reply.latenciesUs!.map((us) => us / 1000),
        violations: reply.violations ?? 0,
        ...(before !== undefined && after !== undefined ? { clientCpuMs: after - before } : {}),
      };
    },
  };
  const close = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    child.stdin.end(); // EOF: it closes its client and exits
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(killer);
  };
  return { workload, close };
}
