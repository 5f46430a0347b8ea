/**
 * `npm run demo` itself, smaller (300 orders, stock 30): it exits 0, writes both reports with
 * the verdict (passed), and leaves none of the processes it started running.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaled } from '../support/time-scale';
import { processState } from '../support/zookeeper';

const ROOT = join(__dirname, '..', '..');

interface DemoRun {
  child: ChildProcess;
  /** The stderr so far (the demo's progress lines). */
  stderr: () => string;
  /** The exit code, once the demo has exited. */
  exited: Promise<number | null>;
  /** Once the demo and every child that inherited its output (an orphan too) have exited. */
  result: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function startDemo(args: string[], env: Record<string, string> = {}): DemoRun {
  const child = spawn(
    process.execPath,
    [require.resolve('ts-node/dist/bin.js'), '--transpile-only', 'scripts/demo.ts', ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: '',
        ZK_NAMESPACE: `/test-demo-${randomBytes(4).toString('hex')}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  const result = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited, result };
}

function runDemo(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return startDemo(args).result;
}

/** The processes whose parent is `pid`, with their command lines. */
function childrenOf(pid: number): { pid: number; args: string }[] {
  const listed = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  return listed.stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), args: m[2] }));
}

/** Polls `probe` until it returns a value, or fails naming `what` after `timeoutMs`. */
async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
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

  // Signalled while the stack starts, the demo has no stack to stop: what it started so far
  // (the embedded ZooKeeper, the instances on their way up) must go with it all the same.
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'on %s during start-up exits %i and leaves none of the processes it started running',
    async (signal, exitCode) => {
      const demo = startDemo(['--embedded-zookeeper', '--out', out], { ZK_CONNECT: '' });
      const started: { pid: number; args: string }[] = [];
      const note = () => {
        for (const child of childrenOf(demo.child.pid!)) {
          if (!started.some((p) => p.pid === child.pid)) started.push(child);
        }
      };
      try {
        await until('the embedded ZooKeeper serving', scaled(60_000), () => {
          note();
          return /^- starting 3 sample-app instances$/m.test(demo.stderr()) ? true : undefined;
        });
        note();
        expect(started.filter((p) => /dev-server\.ts/.test(p.args))).toHaveLength(1);
        demo.child.kill(signal);
        expect(await demo.exited).toBe(exitCode);
        await until(`the demo's children gone (${JSON.stringify(started)})`, scaled(15_000), () =>
          started.every((p) => processState(p.pid) === 'gone') ? true : undefined,
        );
        expect(demo.stderr()).toContain(`${signal}: stopping everything`);
      } finally {
        demo.child.kill('SIGKILL');
        for (const p of started) if (processState(p.pid) !== 'gone') kill(p.pid);
      }
    },
    scaled(120_000),
  );
});
