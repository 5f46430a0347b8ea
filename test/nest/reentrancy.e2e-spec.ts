import { Controller, Injectable, Param, Post } from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, LockService } from '../../lib';
import { Gate, testNamespace, useLockApp, waitFor } from './support/nest-app';

@Injectable()
class OrdersService {
  constructor(private readonly locks: LockService) {}

  @DistributedLock('/orders/<orderId>')
  async update(orderId: string) {
    return { order: this.locks.isHeld(`/orders/${orderId}`) };
  }

  @DistributedLock('/stock/<sku>')
  async restock(orderId: string, sku: string) {
    return {
      order: this.locks.isHeld(`/orders/${orderId}`),
      stock: this.locks.isHeld(`/stock/${sku}`),
    };
  }
}

const log: string[] = [];
const gates = new Map<string, Gate>();

@Controller('orders')
class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post(':id/same')
  @DistributedLock('/orders/<id>')
  same(@Param('id') id: string) {
    return this.orders.update(id);
  }

  @Post(':id/other/:sku')
  @DistributedLock('/orders/<id>')
  other(@Param('id') id: string, @Param('sku') sku: string) {
    return this.orders.restock(id, sku);
  }

  @Post(':id/gated/:name')
  @DistributedLock('/orders/<params.id>')
  async gated(@Param('name') name: string) {
    log.push(`enter ${name}`);
    await gates.get(name)?.opened;
    log.push(`exit ${name}`);
    return name;
  }
}

describe('controller -> service locking', () => {
  // A deadlock would answer 409 after 5 s instead of hanging the test.
  const lockApp = useLockApp(
    { controllers: [OrdersController], providers: [OrdersService] },
    { namespace: testNamespace('reentrancy'), waitTimeoutMs: 5000 },
  );
  const { acquired } = lockApp;
  const server = () => lockApp.app.getHttpServer();

  it('re-enters when the service locks the same path as the handler', async () => {
    await request(server()).post('/orders/1/same').expect(201, { order: true });
    expect(acquired.map((e) => [e.path, e.reentrant])).toEqual([
      ['/orders/1', false],
      ['/orders/1', true],
    ]);
  });

  it('holds both locks when the service locks a different path', async () => {
    await request(server()).post('/orders/2/other/sku-1').expect(201, { order: true, stock: true });
    expect(acquired.map((e) => [e.path, e.reentrant])).toEqual([
      ['/orders/2', false],
      ['/stock/sku-1', false],
    ]);
  });

  it('makes two concurrent requests on one path queue instead of re-entering', async () => {
    log.length = 0;
    gates.set('a', new Gate());
    const first = request(server())
      .post('/orders/3/gated/a')
      .then((res) => res.status);
    await waitFor(() => log.includes('enter a'), 'request a to enter');
    const second = request(server())
      .post('/orders/3/gated/b')
      .then((res) => res.status);
    // Request b queues behind a's node (or, wrongly re-entering, enters while a holds the lock:
    // the log below tells).
    await waitFor(
      async () =>
        log.includes('enter b') || (await lockApp.locks.inspect('/orders/3')).queue.length === 1,
      'request b to queue behind a',
    );
    gates.get('a')!.open();
    expect(await Promise.all([first, second])).toEqual([201, 201]);
    expect(log).toEqual(['enter a', 'exit a', 'enter b', 'exit b']);
    expect(acquired.every((e) => !e.reentrant)).toBe(true);
  });
});
