/**
 * `npm run demo` itself, smaller (300 orders, stock 30): it exits 0, writes both reports with
 * the verdict (passed), and leaves none of the processes it started running.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaled } from '../support/time-scale';

const ROOT = join(__dirname, '..', '..');

function runDemo(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [require.resolve('ts-node/dist/bin.js'), '--transpile-only', 'scripts/demo.ts', ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: '',
        ZK_NAMESPACE: `/test-demo-${randomBytes(4).toString('hex')}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run demo', () => {
  let out: string;
  beforeAll(() => (out = mkdtempSync(join(tmpdir(), 'demo-'))));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it(
    'shows the oversell and its fix, saves the report and stops everything',
    async () => {
      const { code, stdout, stderr } = await runDemo([
        '--orders',
        '300',
        '--stock',
        '30',
        '--out',
        out,
      ]);
      expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toMatch(/^without lock +\/orders\/unsafe +300 /m);
      expect(stdout).toMatch(/^with lock +\/orders +300 +30 +270 +0 +0 +30 +0 /m);
      const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
      expect(report.verdict).toEqual({ passed: true, problems: [] });
      expect(report.runs[0].oversold).toBeGreaterThan(0);
      expect(report.pausedHolder).toMatchObject({ fencedWriteRejected: true, oversold: 0 });
      expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('PASSED: ');
      const pids = [...stderr.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
      pids.push(report.pausedHolder.holder.pid);
      expect(pids).toHaveLength(4);
      expect(pids.filter(alive)).toEqual([]);
    },
    scaled(180_000),
  );

  it('refuses a wrong command line with one line saying what is accepted, exit 2', async () => {
    for (const [args, says] of [
      [['--store', 'foo'], '--store "foo": expected sqlite or postgres'],
      [['--orders', 'abc'], '--orders "abc": expected a whole number >= 1'],
    ]) {
      expect(await runDemo(args as string[])).toEqual({
        code: 2,
        stdout: '',
        stderr: `demo: ${says as string}\n`,
      });
    }
  });
});
