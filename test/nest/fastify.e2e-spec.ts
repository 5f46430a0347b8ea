/**
 * `@DistributedLock` on route handlers of three Fastify applications
 * (`@nestjs/platform-fastify`) in their own processes: requests on one path never overlap,
 * whichever instance takes them; a busy lock answers 409 as on Express.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { AppProcess } from './support/app-process';
import { testNamespace, waitFor, zkConnect } from './support/nest-app';

const REQUESTS = 30;

describe('@DistributedLock on Fastify, 3 instances', () => {
  const namespace = testNamespace('fastify');
  const dir = mkdtempSync(join(tmpdir(), 'nest-fastify-'));
  const logFile = join(dir, 'critical.log');
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    writeFileSync(logFile, '');
    const env = { ZK_CONNECT: zkConnect(), NAMESPACE: namespace, LOG_FILE: logFile, FASTIFY: '1' };
    apps = await Promise.all([AppProcess.start(env), AppProcess.start(env), AppProcess.start(env)]);
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const lines = (): string[] => readFileSync(logFile, 'utf8').split('\n').filter(Boolean);

  it('runs the handlers of one path one at a time across the three instances', async () => {
    const statuses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, seq) =>
        request(apps[seq % 3].url)
          .post('/jobs/f1')
          .send({ seq })
          .then((res) => res.status),
      ),
    );
    expect(statuses).toEqual(Array.from({ length: REQUESTS }, () => 201));
    const log = lines().filter((line) => line.includes(' f1 '));
    expect(log).toHaveLength(2 * REQUESTS);
    // Strictly alternating enter/exit of the same request: no two inside together.
    for (let i = 0; i < log.length; i += 2) {
      const [enter, exit] = [log[i].split(' '), log[i + 1].split(' ')];
      expect([enter[0], exit[0], exit[2], exit[3]]).toEqual(['enter', 'exit', enter[2], enter[3]]);
    }
    const pids = new Set(log.map((line) => line.split(' ')[3]));
    expect(pids.size).toBe(3); // every instance served some
  });

  it('answers 409 naming the path when the lock stays busy past waitTimeoutMs', async () => {
    const held = request(apps[0].url)
      .post('/jobs/f2')
      .send({ seq: 0, gated: true })
      .then((r) => r.status);
    await waitFor(
      () => lines().some((line) => line.startsWith('enter f2 0')),
      'the gated request to hold',
    );
    const res = await request(apps[1].url).post('/jobs/f2/quick');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ statusCode: 409, code: 'LOCK_TIMEOUT', lock: '/jobs/f2' });
    await request(apps[0].url).post('/gates/job:f2').expect(204);
    expect(await held).toBe(201);
  });
});
