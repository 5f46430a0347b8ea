/**
 * What a client of an HTTP application can make the lock layer hold: a request beyond the
 * module's `maxWaitersPerPath` callers waiting for one lock is answered 429 with code
 * LOCK_QUEUE_FULL at once, instead of waiting with the others; the waiting ones are served once
 * the lock is free, and nothing is left waiting after. A body never echoes more than the first
 * 100 characters of a lock path, however long the value the client sent. The busy lock is held
 * by another ZooKeeper session.
 */
import { Body, Controller, Get, INestApplication, Param, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, LockEvents, ZK_LOCK_CLIENT, ZkLockClient, ZkLockModule } from '../../lib';
import { testNamespace, waitFor, zkConnect } from './support/nest-app';

const PER_PATH = 2;

@Controller('orders')
class OrdersController {
  /** A bound only so that a request wrongly queued fails the test instead of hanging it. */
  @Get(':id/pay')
  @DistributedLock('/locks/order:<id>', { waitTimeoutMs: 30_000 })
  pay(@Param('id') id: string): string {
    return `paid ${id}`;
  }

  @Post()
  @DistributedLock('/locks/order:<body.id>')
  place(@Body() body: { id: string }): string {
    return `placed ${body.id.length}`;
  }
}

describe('requests an HTTP client sizes', () => {
  const namespace = testNamespace('queue-limits');
  let app: INestApplication;
  let url: string;
  let other: ZkLockClient;
  const waiting: LockEvents['waiting'][] = [];
  const onWaiting = (event: LockEvents['waiting']) => waiting.push(event);

  beforeAll(async () => {
    @Module({
      imports: [
        ZkLockModule.forRoot({
          connectionString: zkConnect(),
          namespace,
          telemetry: false,
          maxWaitersPerPath: PER_PATH,
        }),
      ],
      controllers: [OrdersController],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
    app.get<ZkLockClient>(ZK_LOCK_CLIENT).on('waiting', onWaiting);
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  });

  afterAll(async () => {
    app?.get<ZkLockClient>(ZK_LOCK_CLIENT).off('waiting', onWaiting);
    await other?.close();
    await app?.close();
  });

  it('answers 429 LOCK_QUEUE_FULL beyond maxWaitersPerPath, serves the waiting ones, and keeps nothing after', async () => {
    const held = await other.acquire('/locks/order:7');
    const first = Array.from({ length: PER_PATH }, () => request(url).get('/orders/7/pay').then());
    await waitFor(() => waiting.length === PER_PATH, `${PER_PATH} requests waiting`);

    const refused = await request(url).get('/orders/7/pay');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      statusCode: 429,
      code: 'LOCK_QUEUE_FULL',
      message: expect.any(String),
      lock: '/locks/order:7',
    });
    expect(refused.text).not.toMatch(/maxWaiters|127\.0\.0\.1/);

    await held.release();
    expect((await Promise.all(first)).map((res) => res.status)).toEqual([200, 200]);
    const client = app.get<ZkLockClient>(ZK_LOCK_CLIENT);
    await waitFor(async () => {
      const { holders, queue } = await client.inspect('/locks/order:7');
      return holders.length === 0 && queue.length === 0;
    }, 'no node left');
    // Room again: the caps count only callers still waiting.
    expect((await request(url).get('/orders/7/pay')).status).toBe(200);
  });

  it('a 60,000-character key gives a 400 body of a few hundred bytes', async () => {
    const res = await request(url)
      .post('/orders')
      .send({ id: 'x'.repeat(60_000) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_LOCK_PATH' });
    expect(res.body.lock).toMatch(/^\/locks\/order:x{87}\.\.\.\(60013 characters\)$/);
    expect(res.text.length).toBeLessThan(500);
  });
});
