import { INestApplication, Injectable } from '@nestjs/common';
import { DistributedLock, LockService } from '../../lib';
import { Gate, createLockApp, testNamespace, waitFor } from './support/nest-app';

const gate = new Gate();
let entered = false;

@Injectable()
class ReportService {
  @DistributedLock('/reports/<name>')
  async build(name: string) {
    entered = true;
    await gate.opened;
    return name;
  }
}

describe('application shutdown', () => {
  const namespace = testNamespace('shutdown');
  // Long sessions: only an explicit release, not a session timeout, can free the locks in time.
  const options = { namespace, sessionTimeoutMs: 30_000 };
  let first: INestApplication;
  let second: INestApplication;

  beforeAll(async () => {
    first = await createLockApp({ providers: [ReportService] }, options);
    second = await createLockApp({ providers: [ReportService] }, options);
  });

  afterAll(async () => {
    gate.open();
    await second.close();
  });

  it('releases held locks on app.close(): another app acquires at once', async () => {
    const locks = first.get(LockService);
    const manual = await locks.acquire('/reports/manual');
    const inFlight = first.get(ReportService).build('monthly');
    await waitFor(() => entered, 'the decorated method to hold its lock');

    const other = second.get(LockService);
    expect(await other.tryAcquire('/reports/manual')).toBeNull();
    expect(await other.tryAcquire('/reports/monthly')).toBeNull();

    await first.close();

    expect(manual.state).not.toBe('held');
    const handles = await Promise.all([
      other.tryAcquire('/reports/manual'),
      other.tryAcquire('/reports/monthly'),
    ]);
    expect(handles.map((h) => h?.path)).toEqual(['/reports/manual', '/reports/monthly']);
    await Promise.all(handles.map((h) => h?.release()));

    gate.open();
    await inFlight.catch(() => undefined);
  });
});
