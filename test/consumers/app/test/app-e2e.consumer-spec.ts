/**
 * The e2e test each Nest CLI generates (test/app.e2e-spec.ts: the real AppModule, an app per
 * test, closed after each), with ZooKeeper down and the one line that replaces ZkLockModule:
 * `ZkLockTestingModule.override(...)` around `Test.createTestingModule(...)`. Nothing connects to
 * the configured address, so the hooks finish within the runner's default timeouts.
 * docs/nestjs/testing.md "Testing the application module".
 */
import { productionZooKeeper } from './zookeeper-down.js';
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ZkLockTestingModule } from 'nestjs-zookeeper-lock/testing';
import { AppModule } from '../src/app.module.js';

describe('AppController (e2e)', () => {
  let app: INestApplication;

  beforeEach(async () => {
    const moduleFixture: TestingModule = await ZkLockTestingModule.override(
      Test.createTestingModule({
        imports: [AppModule],
      }),
    ).compile();

    app = moduleFixture.createNestApplication();
    await app.init();
  });

  afterEach(async () => {
    await app.close();
  });

  afterAll(() => {
    process.env.ZK_CONNECT = productionZooKeeper;
  });

  it('/stock/apple/deduct (POST) on the in-memory ZooKeeper', async () => {
    await app.listen(0, '127.0.0.1');
    const url = await app.getUrl();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => fetch(`${url}/stock/apple/deduct`, { method: 'POST' })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    expect(await (await fetch(`${url}/stock/apple`)).json()).toEqual({ level: 95 });
  });
});
