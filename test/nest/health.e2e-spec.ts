import { Controller, INestApplication, Logger, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib';
import { HealthController } from './fixtures/health.controller';
import { scaled } from '../support/time-scale';
import { ZooKeeperServer } from '../support/zookeeper';
import { testNamespace, waitFor } from './support/nest-app';
import { vi, type MockInstance } from 'vitest';

@Controller()
class WorkController {
  @Post('work')
  @DistributedLock('/work/<query.id>')
  work() {
    return 'done';
  }
}

/**
 * The client's connected states: RECONNECTED is CONNECTED after a connection loss the session
 * survived (a loaded machine can cause one), and the indicator reports both as up.
 */
const connected = expect.stringMatching(/^(CONNECTED|RECONNECTED)$/);

describe('health indicator and ZooKeeper outage', () => {
  let server: ZooKeeperServer;
  let app: INestApplication;
  let logError: MockInstance;
  /** What Terminus logged on a failed check (its logger is Nest's Logger). */
  const terminusLogs = () =>
    logError.mock.calls
      .map((args) => args.map(String).join(' '))
      .filter((line) => line.startsWith('Health Check has failed'));

  beforeAll(async () => {
    logError = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    server = await ZooKeeperServer.start();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TerminusModule.forRoot(),
        ZkLockModule.forRoot({
          connectionString: server.connectionString,
          namespace: testNamespace('health'),
          sessions: 4, // several sessions: the health check lists each
          // Short, so the outage below is noticed soon; scaled, since the sessions must stay
          // connected until then on a loaded machine.
          sessionTimeoutMs: scaled(2000),
          requestTimeoutMs: scaled(1000),
          connectTimeoutMs: scaled(1000),
        }),
      ],
      controllers: [HealthController, WorkController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    logError.mockRestore();
    await app.close();
    await server.stop();
  });

  it('reports up while connected: status and state only, unless details are asked for', async () => {
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body.info.zookeeper).toEqual({ status: 'up', state: connected });
    expect(res.text).not.toContain(server.connectionString);

    const details = await request(app.getHttpServer()).get('/health/details').expect(200);
    expect(details.body.info.zookeeper).toEqual({
      status: 'up',
      state: connected,
      connectionString: server.connectionString,
      // The client's sessions (option sessions: 4 here), each with its own state.
      sessions: [0, 1, 2, 3].map((index) => ({
        index,
        id: expect.any(String),
        state: connected,
      })),
    });
    for (const { id } of details.body.info.zookeeper.sessions) expect(res.text).not.toContain(id);
    await request(app.getHttpServer()).post('/work?id=1').expect(201, 'done');
  });

  it('reports down, and decorated routes answer 503, once ZooKeeper stops', async () => {
    const locks = app.get(LockService);
    await server.stop();
    await waitFor(() => locks.state !== 'CONNECTED', 'the client to notice the outage');

    const res = await request(app.getHttpServer()).get('/health').expect(503);
    expect(res.body.status).toBe('error');
    expect(res.body.error.zookeeper).toEqual({ status: 'down', state: expect.any(String) });
    expect(res.text).not.toContain(server.connectionString);
    expect(terminusLogs().join('\n')).toContain('Health Check has failed');
    expect(terminusLogs().join('\n')).not.toContain(server.connectionString);
    const details = await request(app.getHttpServer()).get('/health/details').expect(503);
    expect(details.body.error.zookeeper.connectionString).toBe(server.connectionString);

    const work = await request(app.getHttpServer()).post('/work?id=2').expect(503);
    expect(work.body).toMatchObject({ statusCode: 503, code: 'ZOOKEEPER_UNAVAILABLE' });
    expect(work.text).not.toContain(server.connectionString); // a client needs no address
  });
});
