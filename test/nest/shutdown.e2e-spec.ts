import {
  BeforeApplicationShutdown,
  Controller,
  Get,
  INestApplication,
  Injectable,
} from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, LeaderElection, LeaderElectionService, LockService } from '../../lib';
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

const ELECTION = '/elections/shutdown';

@Injectable()
class ElectedJob {
  @LeaderElection(ELECTION)
  run(): string {
    return 'ran';
  }
}

@Controller('election')
class ElectionController {
  constructor(private readonly leaders: LeaderElectionService) {}

  @Get('participants')
  participants() {
    return this.leaders.getParticipants(ELECTION);
  }
}

/** Holds app.close() after the destroy hooks (the elections are left), before the HTTP server closes. */
@Injectable()
class ShutdownPause implements BeforeApplicationShutdown {
  static reached = false;
  static readonly gate = new Gate();

  async beforeApplicationShutdown(): Promise<void> {
    ShutdownPause.reached = true;
    await ShutdownPause.gate.opened;
  }
}

describe('election reads while the application shuts down', () => {
  const namespace = testNamespace('shutdown-election');
  const metadata = {
    controllers: [ElectionController],
    providers: [ElectedJob, ShutdownPause],
  };
  const participants = (app: INestApplication) =>
    request(app.getHttpServer()).get('/election/participants');

  afterAll(() => ShutdownPause.gate.open());

  it('answers a read that comes after the elections were left, while the client is open', async () => {
    const app = await createLockApp(metadata, { namespace, participantId: 'leaving' });
    await waitFor(() => app.get(LeaderElectionService).isLeader(ELECTION), 'the app to lead');
    expect((await participants(app)).body).toEqual([{ id: 'leaving', isLeader: true }]);

    const closing = app.close();
    await waitFor(() => ShutdownPause.reached, 'the shutdown to have run the destroy hooks');
    const res = await participants(app);
    ShutdownPause.gate.open();
    await closing;
    // Its own node is gone: nobody takes part any more.
    expect([res.status, res.body]).toEqual([200, []]);
  });

  it('answers 503 ZOOKEEPER_UNAVAILABLE once the client is closed, as for a lock', async () => {
    const app = await createLockApp(metadata, { namespace, participantId: 'closed' });
    try {
      await app.get(LockService).client.close(); // the shutdown has begun
      const res = await participants(app);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ statusCode: 503, code: 'ZOOKEEPER_UNAVAILABLE' });
    } finally {
      await app.close();
    }
  });
});
