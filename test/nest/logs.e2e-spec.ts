/**
 * What the module logs. One line at connect (the connection string, never the
 * credentials, and the session id); per-lock lines at verbose only; no error and no stack for an
 * expected outcome (a skip job whose one try meets the shutdown).
 */
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLock, DistributedSemaphore, LockService, ZkLockModule } from '../../lib';
import { capturingLogger, LogLine, testNamespace, zkConnect } from './support/nest-app';

@Injectable()
class Reports {
  @DistributedLock('/jobs/nightly', { onBusy: 'skip' })
  async nightly(): Promise<string> {
    return 'ran';
  }

  @DistributedSemaphore('/render/pdf', { maxLeases: 2 })
  async render(): Promise<string> {
    return 'rendered';
  }
}

describe('logs of ZkLockModule', () => {
  const lines: LogLine[] = [];
  const namespace = testNamespace('logs');

  it('says once that it connected, with the session and without the credentials', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({
          connectionString: zkConnect(),
          namespace,
          auth: 'reports:s3cret-pass',
          telemetry: false,
        }),
      ],
      providers: [Reports],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: capturingLogger(lines) });
    await app.init();
    const locks = app.get(LockService);
    try {
      const connected = lines.filter((l) => l.context === 'ZkLock' && /onnected/.test(l.message));
      expect(connected).toEqual([expect.objectContaining({ level: 'log' })]);
      expect(connected[0].message).toContain(zkConnect());
      expect(connected[0].message).toContain(locks.client.sessionId);
      expect(connected[0].message).toContain(namespace);

      // Per-lock lines: verbose, which Nest does not print by default.
      expect(await app.get(Reports).nightly()).toBe('ran');
      const perLock = lines.filter((l) => l.message.includes('"/jobs/nightly"'));
      expect(perLock.length).toBeGreaterThanOrEqual(2); // acquired, released
      expect(perLock.every((l) => l.level === 'verbose')).toBe(true);
    } finally {
      await app.close();
    }
    expect(lines.map((l) => l.message).join('\n')).not.toContain('s3cret');
  });

  /** An app with Reports, its log captured from the start (lines cleared). */
  async function bootReports(): Promise<INestApplication> {
    lines.length = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({ connectionString: zkConnect(), namespace, telemetry: false }),
      ],
      providers: [Reports],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: capturingLogger(lines) });
    return app.init();
  }

  it("names a semaphore in its lines, not its inner mutex's path", async () => {
    const app = await bootReports();
    try {
      expect(await app.get(Reports).render()).toBe('rendered');
    } finally {
      await app.close();
    }
    const perLock = lines.filter((l) => l.context === 'ZkLock' && l.level === 'verbose');
    expect(perLock.map((l) => l.message)).toEqual([
      expect.stringMatching(
        /^Semaphore "\/render\/pdf": its mutex taken after \d+ ms, to take a lease$/,
      ),
      expect.stringMatching(/^Semaphore "\/render\/pdf": its mutex released after \d+ ms$/),
    ]);
  });

  it('skips, without an error or a stack, a skip job whose try meets the shutdown', async () => {
    const app = await bootReports();
    const reports = app.get(Reports);
    await app.get(LockService).client.close(); // the shutdown has begun
    try {
      await expect(reports.nightly()).resolves.toBeUndefined();
    } finally {
      await app.close();
    }
    expect(lines.filter((l) => l.level === 'error' || l.stack)).toEqual([]);
    expect(lines.some((l) => l.message.includes('Reports.nightly') && l.level === 'log')).toBe(
      true,
    );
  });
});
