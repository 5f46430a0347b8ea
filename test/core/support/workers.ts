/** Runs several fixtures/cycle-worker.ts processes against one lock path, started together. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { exited, nextMessage, spawnFixture } from './agents';

export interface CycleRun {
  path: string;
  processes: number;
  callers: number;
  cycles: number;
  logFile: string;
  counterFile?: string;
  maxSleepMs?: number;
  gapMs?: number;
  parentCleanupDelayMs?: number;
  /** The workers' client option `sessions` (default: the client's). */
  sessions?: number;
}

/** Starts all workers, waits until each has a session, says "go", and waits for clean exits. */
export async function runCycleWorkers(run: CycleRun): Promise<void> {
  const env: Record<string, string> = {
    LOCK_PATH: run.path,
    CALLERS: String(run.callers),
    CYCLES: String(run.cycles),
    LOG_FILE: run.logFile,
    MAX_SLEEP_MS: String(run.maxSleepMs ?? 0),
    GAP_MS: String(run.gapMs ?? 0),
  };
  if (run.counterFile) env.COUNTER_FILE = run.counterFile;
  if (run.sessions !== undefined) env.SESSIONS = String(run.sessions);
  if (run.parentCleanupDelayMs !== undefined)
    env.CLEANUP_DELAY_MS = String(run.parentCleanupDelayMs);
  await runWorkers('cycle-worker', run.processes, env);
}

/**
 * Starts `processes` copies of fixtures/<fixture>.ts (ready / 'go' / done protocol), waits until
 * each has a session, says "go" to all at once, and waits for clean exits.
 */
export async function runWorkers(
  fixture: string,
  processes: number,
  env: Record<string, string>,
): Promise<void> {
  const workers = Array.from({ length: processes }, () => spawnFixture(fixture, env));
  await Promise.all(workers.map((w) => nextMessage(w, () => true)));
  const codes = Promise.all(workers.map(exited));
  workers.forEach((w) => w.send('go'));
  const results = await codes;
  if (results.some((code) => code !== 0)) {
    throw new Error(`${fixture} exit codes: ${results.join(', ')} (stderr above has the reason)`);
  }
}

/** One round of runCycleRounds: what each process runs, on a client with that round's options. */
export interface CycleRound {
  callers: number;
  cycles: number;
  gapMs?: number;
  parentCleanupDelayMs?: number;
}

/**
 * runCycleWorkers for several rounds by the same processes (a process's start costs more than a
 * round of cycles): each round on a client of each process's own with the round's options, all
 * processes said "go" at once once each has its session; `afterRound` runs once every process
 * has closed that round's client, before the next round starts. Waits for clean exits.
 */
export async function runCycleRounds(
  run: { path: string; processes: number; logFile: string; maxSleepMs?: number },
  rounds: CycleRound[],
  afterRound: (round: CycleRound) => Promise<void>,
): Promise<void> {
  const env = {
    LOCK_PATH: run.path,
    LOG_FILE: run.logFile,
    MAX_SLEEP_MS: String(run.maxSleepMs ?? 0),
    ROUNDS: JSON.stringify(rounds),
  };
  const workers = Array.from({ length: run.processes }, () => {
    const child = spawnFixture('cycle-worker', env);
    return { child, inbox: inboxOf(child) };
  });
  const codes = Promise.all(workers.map(({ child }) => exited(child)));
  try {
    for (const round of rounds) {
      await Promise.all(workers.map(({ inbox }) => inbox('ready')));
      workers.forEach(({ child }) => child.send('go'));
      await Promise.all(workers.map(({ inbox }) => inbox('closed')));
      await afterRound(round);
    }
  } catch (err) {
    workers.forEach(({ child }) => child.kill('SIGKILL')); // the others wait for a 'go'
    await codes;
    throw err;
  }
  const results = await codes;
  if (results.some((code) => code !== 0)) {
    throw new Error(`cycle-worker exit codes: ${results.join(', ')} (stderr above has the reason)`);
  }
}

/**
 * The messages `child` sends, kept from now on: `next(type)` takes the first of that type not
 * taken yet, whether it came already or comes later; fails if the child exits first.
 */
function inboxOf(child: ChildProcess): (type: string) => Promise<void> {
  const came: string[] = [];
  const waiting: Array<{ type: string; resolve: () => void; reject: (err: Error) => void }> = [];
  const deliver = (): void => {
    for (const [i, wait] of waiting.entries()) {
      const at = came.indexOf(wait.type);
      if (at < 0) continue;
      came.splice(at, 1);
      waiting.splice(i, 1);
      wait.resolve();
      return deliver();
    }
  };
  child.on('message', (message: { type?: string }) => {
    came.push(String(message?.type));
    deliver();
  });
  child.once('exit', (code, signal) => {
    for (const wait of waiting.splice(0)) {
      wait.reject(
        new Error(`cycle-worker ${child.pid} exited (${code ?? signal}) before '${wait.type}'`),
      );
    }
  });
  return (type) =>
    new Promise<void>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        const at = came.indexOf(type);
        if (at >= 0) return void (came.splice(at, 1), resolve());
        return reject(new Error(`cycle-worker ${child.pid} exited before '${type}'`));
      }
      waiting.push({ type, resolve, reject });
      deliver();
    });
}

/** A fresh temp folder for log/counter files; returns it and a remover. */
export function scratchDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'zk-lock-core-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
