/** Runs several fixtures/cycle-worker.ts processes against one lock path, started together. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** A fresh temp folder for log/counter files; returns it and a remover. */
export function scratchDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'zk-lock-core-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
