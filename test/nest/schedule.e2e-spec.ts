/**
 * Run-once jobs: three Nest applications in three processes (three ZooKeeper
 * sessions) schedule the same @nestjs/schedule job under
 * `@DistributedLock('/jobs/nightly', { onBusy: 'skip', minHoldMs })` (test/nest/fixtures/
 * schedule.app.ts). Their wall clocks are offset by 0, +1 s and +2 s (shifted-clock.ts), so
 * each cron firing happens at three different real times, further apart than the job lasts.
 * Each firing must run on exactly one instance, the others skip it; a firing that ran twice
 * fails the test (shown to catch a run without minHoldMs, see docs/nestjs/run-once-jobs.md).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZkLockClient } from '../../lib';
import { scaled } from '../support/time-scale';
import { AppProcess } from './support/app-process';
import { testNamespace, waitFor, zkConnect } from './support/nest-app';

/** Offsets of the three instances' clocks: the skew is 2 s. */
const CLOCK_OFFSETS_MS = [0, 1_000, 2_000];

interface Entry {
  kind: 'run' | 'skip';
  firing: string;
  pid: number;
}

describe('run-once jobs on three instances with skewed clocks', () => {
  const namespace = testNamespace('schedule');
  const dir = mkdtempSync(join(tmpdir(), 'nest-schedule-'));
  let apps: AppProcess[] = [];
  let logFile = '';

  const entries = (): Entry[] =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [kind, job, slot, pid] = line.split(' ');
        return { kind: kind as Entry['kind'], firing: `${job} ${slot}`, pid: Number(pid) };
      });

  /** Per firing: the pids that ran it and the pids that skipped it. */
  const byFiring = () => {
    const firings = new Map<string, { run: number[]; skip: number[] }>();
    for (const e of entries()) {
      if (!firings.has(e.firing)) firings.set(e.firing, { run: [], skip: [] });
      firings.get(e.firing)![e.kind].push(e.pid);
    }
    return firings;
  };

  /** The detector: no firing ran on more than one instance. */
  const expectNoFiringRanTwice = () => {
    const twice = [...byFiring()].filter(([, { run }]) => run.length > 1);
    expect(twice).toEqual([]);
  };

  async function startApps(name: string, env: Record<string, string>): Promise<void> {
    logFile = join(dir, `${name}.log`);
    writeFileSync(logFile, '');
    const common = {
      ZK_CONNECT: zkConnect(),
      NAMESPACE: `${namespace}-${name}`,
      LOG_FILE: logFile,
    };
    apps = await Promise.all(
      CLOCK_OFFSETS_MS.map((offset) =>
        AppProcess.start({ ...common, ...env, CLOCK_OFFSET_MS: String(offset) }, 'schedule.app.ts'),
      ),
    );
  }

  afterEach(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    apps = [];
  });

  afterAll(async () => {
    // Every instance released its lock on SIGTERM and its client removed the idle lock path.
    const observer = await ZkLockClient.connect({ connectionString: zkConnect() });
    try {
      for (const name of ['cron', 'timeout', 'interval']) {
        const path = `${namespace}-${name}/jobs/nightly`;
        await waitFor(
          async () => (await observer.inspect(path)).holder === null,
          `${path} to be free`,
        );
      }
    } finally {
      await observer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('@Cron: each firing runs on exactly one instance, the two others skip it', async () => {
    // 4 s: 2 s above the 2 s skew, 2 s below the 6 s period. BROKEN_MIN_HOLD_MS=0 shows the
    // detector failing this test: without the minimum hold, a later-clocked instance runs a
    // firing again.
    const minHoldMs = process.env.BROKEN_MIN_HOLD_MS ?? '4000';
    await startApps('cron', { JOB: 'cron', MIN_HOLD_MS: minHoldMs });
    const complete = () =>
      [...byFiring().values()].filter(({ run, skip }) => run.length + skip.length >= 3);
    await waitFor(
      () => {
        expectNoFiringRanTwice(); // fail as soon as a firing ran twice
        return complete().length >= 3;
      },
      'three firings seen by all three instances',
      scaled(90_000), // within the runner's 120 s, so a miss says what was missing
    );
    expectNoFiringRanTwice();
    const pids = apps.map((app) => app.pid).sort();
    for (const { run, skip } of complete()) {
      expect(run).toHaveLength(1);
      expect([...run, ...skip].sort()).toEqual(pids); // every instance fired, one ran
    }
  });

  it('@Timeout: the one firing of each instance runs on exactly one of them', async () => {
    // The instances start seconds apart: the hold covers their whole start-up.
    await startApps('timeout', { JOB: 'timeout', MIN_HOLD_MS: String(scaled(120_000)) });
    await waitFor(() => entries().length >= 3, 'every instance to fire its timeout');
    const firings = byFiring();
    expect([...firings.keys()]).toEqual(['timeout 0']);
    const { run, skip } = firings.get('timeout 0')!;
    expect(run).toHaveLength(1);
    expect(skip).toHaveLength(2);
  });

  it('@Interval: within minHoldMs, one run across the instances, every other firing skipped', async () => {
    await startApps('interval', { JOB: 'interval', MIN_HOLD_MS: String(scaled(120_000)) });
    const skippedBy = () =>
      new Set(
        entries()
          .filter((e) => e.kind === 'skip')
          .map((e) => e.pid),
      );
    // Every instance has fired (twice for the winner) while the hold lasted.
    await waitFor(() => skippedBy().size === 3, 'every instance to skip a firing');
    const runs = entries().filter((e) => e.kind === 'run');
    expect(runs).toHaveLength(1);
  });
});
