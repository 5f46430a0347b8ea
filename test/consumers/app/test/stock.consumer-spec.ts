/**
 * The app's own tests, as a user writes them (Vitest in nest12-esm, Jest in nest11-cjs: their
 * globals only): the decorated handler on a real ZooKeeper (ZK_CONNECT, started by
 * scripts/test-consumers.ts) and ZkLockTestingModule without one.
 */
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { LockService, ZkLockClient } from 'nestjs-zookeeper-lock';
import { InMemoryZooKeeper, ZkLockTestingModule } from 'nestjs-zookeeper-lock/testing';
import { AppModule } from '../src/app.module.js';
import { StockService } from '../src/stock.service.js';

const ORDERS = '/locks/consumer/orders';

const until = async (condition: () => Promise<boolean>): Promise<void> => {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('the app on a real ZooKeeper', () => {
  let app: INestApplication;
  let url: string;
  let other: ZkLockClient;

  beforeAll(async () => {
    const connectionString = process.env.ZK_CONNECT;
    if (!connectionString) throw new Error('ZK_CONNECT names the ZooKeeper to test against');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication();
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
    other = await ZkLockClient.connect({ connectionString });
  });

  afterAll(async () => {
    await other?.close();
    await app?.close();
  });

  const deduct = async (): Promise<{ level: number; handled: number }> => {
    const answer = await fetch(`${url}/stock/apple/deduct`, { method: 'POST' });
    expect(answer.status).toBe(201);
    return (await answer.json()) as { level: number; handled: number };
  };

  it("serializes 10 concurrent calls of the service's method on ZooKeeper: no oversell", async () => {
    const stock = app.get(StockService);
    await Promise.all(Array.from({ length: 10 }, () => stock.deduct('plum', 1)));
    expect(stock.level('plum')).toBe(90);
  });

  it('serializes 10 concurrent requests on the lock: no oversell', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, deduct));
    expect(answers.map((a) => a.level).sort((a, b) => a - b)).toEqual([
      90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
    ]);
    expect(await (await fetch(`${url}/stock/apple`)).json()).toEqual({ level: 90 });
  });

  it("waits while another session holds the handler's lock, and runs once it is free", async () => {
    const held = await other.acquire(ORDERS);
    let answered = false;
    const request = deduct().then((answer) => ((answered = true), answer));
    const locks = app.get(LockService);
    await until(async () => (await locks.inspect(ORDERS)).queue.length === 1);
    expect(answered).toBe(false); // queued behind the other session on ZooKeeper
    await held.release();
    expect((await request).level).toBe(89);
    await until(async () => (await locks.inspect(ORDERS)).holder === null);
  });
});

describe('ZkLockTestingModule (nestjs-zookeeper-lock/testing): no ZooKeeper', () => {
  let moduleRef: TestingModule;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot({ isGlobal: true })],
      providers: [StockService],
    }).compile();
    await moduleRef.init();
  });

  afterEach(() => moduleRef.close());

  it('serializes the service on the in-memory ZooKeeper', async () => {
    const stock = moduleRef.get(StockService);
    await Promise.all(Array.from({ length: 20 }, () => stock.deduct('pear', 1)));
    expect(stock.level('pear')).toBe(80);
    // The client's session (option sessions, 1 by default) on the in-memory server.
    expect(moduleRef.get(InMemoryZooKeeper).sessionIds).toHaveLength(1);
  });
});
