import {
  ArgumentsHost,
  Body,
  Catch,
  Controller,
  ExceptionFilter,
  Get,
  Injectable,
  NotFoundException,
  Param,
  ParseIntPipe,
  PipeTransform,
  Post,
  Query,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { map, Observable, throwError, timer } from 'rxjs';
import request from 'supertest';
import { DistributedLock, encodePathSegment, LockService, ZkLockClient } from '../../lib';
import { captureLogs, testNamespace, useLockApp, waitFor, zkConnect } from './support/nest-app';
import { scaled } from '../support/time-scale';

/** What the pipe saw: was the request's lock held when it ran? */
const piped: { value: string; held: boolean }[] = [];

@Injectable()
class RecordingPipe implements PipeTransform<string, string> {
  constructor(private readonly locks: LockService) {}
  transform(value: string): string {
    piped.push({ value, held: this.locks.isHeld(`/locks/piped:${value}`) });
    return value;
  }
}

/** A domain error of the application, answered by its own filter. */
class OrderRefusedError extends Error {}
const caught: unknown[] = [];

@Catch(OrderRefusedError)
class OrderRefusedFilter implements ExceptionFilter {
  catch(error: OrderRefusedError, host: ArgumentsHost) {
    caught.push(error);
    host.switchToHttp().getResponse().status(422).json({ refused: error.message });
  }
}
const thrown: OrderRefusedError[] = [];

@Controller('orders')
class OrdersController {
  constructor(private readonly locks: LockService) {}

  @Post(':id')
  @DistributedLock('/locks/order:<id>')
  update(@Param('id') id: string) {
    return {
      heldHere: this.locks.isHeld(`/locks/order:${id}`),
      adminHeld: this.locks.isHeld('/locks/admin'),
    };
  }

  @Post(':id/lines')
  @DistributedLock('/locks/<params.id>/<query.line>/<body.items.0.sku>')
  lines(
    @Param('id') id: string,
    @Query('line') line: string,
    @Body() body: { items: { sku: string }[] },
  ) {
    return this.locks.isHeld(`/locks/${id}/${line}/${body.items[0].sku}`);
  }

  @Get('search')
  @DistributedLock('/locks/search:<id>')
  search(@Query('id') id: string) {
    return this.locks.isHeld(`/locks/search:${id}`);
  }

  @Post(':id/missing')
  @DistributedLock('/locks/order:<params.id>/<body.reason>')
  missing() {
    throw new Error('the handler must not run without its lock value');
  }

  @Post(':shop/pay')
  @DistributedLock(
    (shop: string, body: { orderId?: unknown }) =>
      `/locks/pay:${encodePathSegment(shop)}:${encodePathSegment(body.orderId)}`,
  )
  pay(@Param('shop') _shop: string, @Body() _body: { orderId?: unknown }) {
    throw new Error('the handler must not run without its lock value');
  }

  @Post(':id/fail')
  @DistributedLock('/locks/fail:<id>')
  fail(@Param('id') id: string): never {
    throw new NotFoundException(`order ${id} not found`);
  }

  @Get(':id/stream')
  @DistributedLock('/locks/stream:<id>')
  stream(@Param('id') id: string): Observable<boolean> {
    return timer(50).pipe(map(() => this.locks.isHeld(`/locks/stream:${id}`)));
  }

  @Get(':id/stream-error')
  @DistributedLock('/locks/stream:<id>')
  streamError(@Param('id') id: string): Observable<never> {
    return throwError(() => new NotFoundException(`stream ${id} failed`));
  }

  @Post(':id/fn')
  @DistributedLock((id: string) => `/locks/fn:${id}`, { waitTimeoutMs: scaled(10_000) })
  byFunction(@Param('id') id: string) {
    return this.locks.isHeld(`/locks/fn:${id}`);
  }

  @Post(':id/piped')
  @DistributedLock('/locks/piped:<id>')
  piped(@Param('id', RecordingPipe) id: string) {
    return this.locks.isHeld(`/locks/piped:${id}`);
  }

  @Post(':num/int')
  @DistributedLock('/locks/int:<num>')
  byNumber(@Param('num', ParseIntPipe) num: number) {
    return num;
  }

  @Post(':id/sku')
  @DistributedLock('/locks/<id>/<sku>') // id: the parameter; sku: a field of the @Body()
  bySku(@Param('id') id: string, @Body() body: { sku: string }) {
    void [id, body];
    return 'ran';
  }

  @Get(':id/fn-stream')
  @DistributedLock((id: string) => `/locks/fn-stream:${id}`)
  fnStream(@Param('id') id: string): Observable<boolean> {
    return timer(50).pipe(map(() => this.locks.isHeld(`/locks/fn-stream:${id}`)));
  }

  @Post(':id/refuse')
  @DistributedLock('/locks/refuse:<id>')
  async refuse(@Param('id') id: string): Promise<never> {
    const error = new OrderRefusedError(`order ${id} refused`);
    thrown.push(error);
    throw error;
  }

  @Post(':id/default-wait')
  @DistributedLock('/locks/default-wait:<params.id>')
  defaultWait() {
    return 'ran';
  }

  @Post(':id/busy')
  @DistributedLock('/locks/busy:<params.id>', { waitTimeoutMs: 300 })
  busy() {
    return 'ran';
  }
}

/** Long enough for an uncontended first request on a loaded machine, short for the 409 test. */
const MODULE_WAIT_MS = scaled(2_000);

describe('@DistributedLock on a controller handler', () => {
  const namespace = testNamespace('http-handler');
  const lockApp = useLockApp(
    {
      controllers: [OrdersController],
      providers: [{ provide: APP_FILTER, useClass: OrderRefusedFilter }],
    },
    { namespace, waitTimeoutMs: MODULE_WAIT_MS }, // the module default, for handlers that set none
  );
  const server = () => lockApp.app.getHttpServer();
  const acquiredPaths = () => lockApp.acquired.map((event) => event.path);
  let other: ZkLockClient;

  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  });

  afterAll(() => other.close());

  /** Another session can take the lock now: nobody holds it. */
  async function isFree(path: string): Promise<boolean> {
    const handle = await other.tryAcquire(path);
    await handle?.release();
    return handle !== null;
  }

  it('holds the lock named by a route param while the handler runs', async () => {
    const res = await request(server()).post('/orders/42').expect(201);
    expect(res.body).toEqual({ heldHere: true, adminHeld: false });
    expect(acquiredPaths()).toEqual(['/locks/order:42']);
    expect(await isFree('/locks/order:42')).toBe(true);
  });

  it('resolves explicit params, query and body scopes', async () => {
    await request(server())
      .post('/orders/7/lines?line=2')
      .send({ items: [{ sku: 'sku-1' }] })
      .expect(201, 'true');
    expect(acquiredPaths()).toEqual(['/locks/7/2/sku-1']);
  });

  it('finds a bare <name> in the query when the route has no such param', async () => {
    await request(server()).get('/orders/search?id=q1').expect(200, 'true');
    expect(acquiredPaths()).toEqual(['/locks/search:q1']);
  });

  it('answers 400 and locks nothing when a template value is missing', async () => {
    const res = await request(server()).post('/orders/5/missing').send({}).expect(400);
    // The template names the value the client did not send.
    expect(res.body).toMatchObject({
      code: 'INVALID_LOCK_PATH',
      lock: '/locks/order:<params.id>/<body.reason>',
    });
    expect(acquiredPaths()).toEqual([]);
  });

  it('answers 400 and locks nothing when a path function encodes a missing or non-scalar value', async () => {
    for (const body of [{}, { orderId: null }, { orderId: '' }, { orderId: { id: 7 } }]) {
      const res = await request(server()).post('/orders/9/pay').send(body);
      expect([body, res.status, res.body.code]).toEqual([body, 400, 'INVALID_LOCK_PATH']);
    }
    expect(acquiredPaths()).toEqual([]);
  });

  it('reads a bare <name> from the source fixed at decoration: a query or body cannot steer it', async () => {
    // <id> is the handler's parameter (the route param), <sku> a field of its @Body(): the
    // query's ?id= and ?sku=, and the body's id, change nothing.
    await request(server())
      .post('/orders/p1/sku?id=q1&sku=q2')
      .send({ id: 'b1', sku: 's1' })
      .expect(201);
    await request(server()).post('/orders/p2/sku?sku=zzz').send({ sku: 'b2' }).expect(201);
    expect(acquiredPaths()).toEqual(['/locks/p1/s1', '/locks/p2/b2']);
  });

  it('locks the value after pipes: /orders/042 and /orders/42 are one key with ParseIntPipe', async () => {
    await request(server()).post('/orders/042/int').expect(201, '42');
    await request(server()).post('/orders/42/int').expect(201, '42');
    expect(acquiredPaths()).toEqual(['/locks/int:42', '/locks/int:42']);
  });

  it('with ParseIntPipe, a holder of /locks/int:42 keeps /orders/042 waiting: one key, serialized', async () => {
    const handle = await other.acquire('/locks/int:42');
    try {
      const res = await request(server()).post('/orders/042/int').expect(409);
      expect(res.body).toMatchObject({ code: 'LOCK_TIMEOUT', lock: '/locks/int:42' });
    } finally {
      await handle.release();
    }
    await request(server()).post('/orders/042/int').expect(201, '42');
  });

  it('takes the lock after guards, interceptors and pipes, around the handler', async () => {
    piped.length = 0;
    await request(server()).post('/orders/p3/piped').expect(201, 'true');
    expect(piped).toEqual([{ value: 'p3', held: false }]); // the pipe ran before the lock
  });

  it('with a path function, holds the lock until a returned Observable completes', async () => {
    await request(server()).get('/orders/5/fn-stream').expect(200, 'true');
    expect(acquiredPaths()).toEqual(['/locks/fn-stream:5']);
    // Released once the stream has ended, which may be just after the answer went out.
    await waitFor(
      () => isFree('/locks/fn-stream:5'),
      'the lock of /locks/fn-stream:5 to be released',
    );
  });

  it("passes the handler's own non-HTTP error unchanged to the app's filter, and releases", async () => {
    caught.length = thrown.length = 0;
    await request(server()).post('/orders/6/refuse').expect(422, { refused: 'order 6 refused' });
    expect(caught).toHaveLength(1);
    expect(caught[0]).toBe(thrown[0]);
    expect(await isFree('/locks/refuse:6')).toBe(true);
  });

  it("answers 409 after the module's waitTimeoutMs when the handler sets none", async () => {
    const handle = await other.acquire('/locks/default-wait:1');
    try {
      const logs = captureLogs();
      try {
        const res = await request(server()).post('/orders/1/default-wait').expect(409);
        expect(res.body).toMatchObject({ code: 'LOCK_TIMEOUT', lock: '/locks/default-wait:1' });
        // The developer's message, with the wait, goes to the log.
        expect(logs.lines.map((l) => l.message).join('\n')).toContain(
          `after ${MODULE_WAIT_MS} ms waiting for lock "/locks/default-wait:1"`,
        );
      } finally {
        logs.restore();
      }
    } finally {
      await handle.release();
    }
  });

  it.each([
    ['..%2Fadmin', '/locks/order:..%2Fadmin'],
    ['a%2Fb', '/locks/order:a%2Fb'],
  ])('keeps the value %s inside one segment', async (raw, expected) => {
    const res = await request(server()).post(`/orders/${raw}`).expect(201);
    expect(acquiredPaths()).toEqual([expected]);
    expect(res.body.adminHeld).toBe(false);
  });

  it('releases when the handler throws, and keeps its HTTP error', async () => {
    const res = await request(server()).post('/orders/9/fail').expect(404);
    expect(res.body.message).toBe('order 9 not found');
    expect(acquiredPaths()).toEqual(['/locks/fail:9']);
    expect(await isFree('/locks/fail:9')).toBe(true);
  });

  it('holds the lock until a returned Observable completes, then releases', async () => {
    await request(server()).get('/orders/3/stream').expect(200, 'true');
    // Released once the stream has ended, which may be just after the answer went out.
    await waitFor(() => isFree('/locks/stream:3'), 'the lock of /locks/stream:3 to be released');
  });

  it('releases when a returned Observable errors, and keeps its error', async () => {
    await request(server()).get('/orders/4/stream-error').expect(404);
    expect(acquiredPaths()).toEqual(['/locks/stream:4']);
    // Released once the stream has ended, which may be just after the answer went out.
    await waitFor(() => isFree('/locks/stream:4'), 'the lock of /locks/stream:4 to be released');
  });

  it('locks by a path function called with the handler arguments, mapping errors too', async () => {
    await request(server()).post('/orders/8/fn').expect(201, 'true');
    expect(acquiredPaths()).toEqual(['/locks/fn:8']);
    const handle = await other.acquire('/locks/fn:8');
    try {
      await request(server()).post('/orders/8/fn').expect(409);
    } finally {
      await handle.release();
    }
  });

  it('answers 409 naming the path and the wait when the lock stays busy', async () => {
    const handle = await other.acquire('/locks/busy:1');
    try {
      const logs = captureLogs();
      try {
        const res = await request(server()).post('/orders/1/busy').expect(409);
        expect(res.body).toEqual({
          statusCode: 409,
          code: 'LOCK_TIMEOUT',
          message: expect.any(String),
          lock: '/locks/busy:1',
        });
        const logged = logs.lines.filter(
          (l) => l.message.includes('"/locks/busy:1"') && l.level !== 'verbose',
        );
        expect(logged).toEqual([expect.objectContaining({ level: 'warn', stack: false })]);
        expect(logged[0].message).toContain('300 ms');
      } finally {
        logs.restore();
      }
    } finally {
      await handle.release();
    }
    await request(server()).post('/orders/1/busy').expect(201, 'ran');
  });
});
