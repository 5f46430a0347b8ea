/**
 * `npm run bench -- --quick --peers` still works: it runs every scenario (the peers' rows, with
 * the real Curator and kazoo, among them) against the test ZooKeeper and writes one JSON line
 * each with the documented fields, and the lock kept mutual exclusion. No timing is asserted
 * here; numbers belong to bench/README.md. Run by `npm run test:bench` (CI's bench step), not by
 * `npm test`: it is a whole bench run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIOS } from './bench.types';
import { scaled } from '../test/support/time-scale';

const ROOT = join(__dirname, '..');

function runBench(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', 'bench/run.ts', ...args],
      {
        cwd: ROOT,
        env: { ...process.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('npm run bench -- --quick --peers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-e2e-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'writes one JSON line per scenario with the documented fields and no violations',
    async () => {
      const out = join(dir, 'results.jsonl');
      const { code, output } = await runBench(['--quick', '--peers', '--out', out]);
      // On failure, show what the bench printed (its last lines say which scenario and why).
      if (code !== 0) throw new Error(`bench exited with ${code}:\n${output.slice(-4000)}`);
      const lines = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      // Every row, the peers' (curator-many-keys) among them.
      expect(lines.map((l) => l.scenario)).toEqual(SCENARIOS);
      for (const line of lines) {
        for (const field of [
          'ops',
          'opsPerSec',
          'p50Ms',
          'p99Ms',
          'violations',
          'zkRequestsPerOp',
        ]) {
          expect(typeof line[field]).toBe('number');
        }
        expect(line.ops).toBeGreaterThan(0);
        expect(line.violations).toBe(0);
      }
    },
    scaled(900_000),
  );

  it(
    'runs a single scenario with --only',
    async () => {
      const out = join(dir, 'only.jsonl');
      const { code } = await runBench(['--quick', '--only', 'raw-cycle', '--out', out]);
      expect(code).toBe(0);
      const lines = readFileSync(out, 'utf8').trim().split('\n');
      expect(lines.map((line) => JSON.parse(line).scenario)).toEqual(['raw-cycle']);
    },
    scaled(60_000),
  );
});
