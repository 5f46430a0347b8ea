/**
 * The decorator forms of the lock family: `@DistributedLock(path, { mode })` for
 * the read/write lock (on a service and on a route handler), `@DistributedSemaphore` for a
 * limit, and a path function returning several paths for the multi-path lock.
 */
import { Body, Controller, Get, Injectable, Param, Post } from '@nestjs/common';
import request from 'supertest';
import { DistributedLock, DistributedSemaphore, ZkLockClient, ZkLockError } from '../../lib';
import {
  captureLogs,
  Gate,
  testNamespace,
  useLockApp,
  waitFor,
  zkConnect,
} from './support/nest-app';

/** Counts callers inside, and the most at once. */
class Inside {
  now = 0;
  most = 0;
  async run<T>(gate: Gate, fn: () => T): Promise<T> {
    this.now++;
    this.most = Math.max(this.most, this.now);
    try {
      await gate.opened;
      return fn();
    } finally {
      this.now--;
    }
  }
}

const gate = new Gate();
const inside = new Inside();

@Injectable()
class CatalogService {
  @DistributedLock('/catalog/<id>', { mode: 'read' })
  read(id: string) {
    return inside.run(gate, () => id);
  }

  @DistributedLock('/catalog/<id>', { mode: 'write' })
  write(id: string) {
    return inside.run(gate, () => id);
  }

  @DistributedSemaphore('/sem/render', { maxLeases: 2 })
  render() {
    return inside.run(gate, () => 'rendered');
  }

  @DistributedLock((from: string, to: string) => [`/accounts/${from}`, `/accounts/${to}`])
  transfer(from: string, to: string) {
    return inside.run(gate, () => `${from}->${to}`);
  }

  @DistributedLock('/accounts/<legs.*.account>')
  settle(legs: Array<{ account: string; amount: number }>) {
    return inside.run(gate, () => legs.map((leg) => leg.account).join('+'));
  }
}

@Controller('catalog')
class CatalogController {
  @Get(':id')
  @DistributedLock('/catalog/<id>', { mode: 'read' })
  get(@Param('id') id: string) {
    return inside.run(gate, () => ({ id }));
  }

  @Post('orders')
  @DistributedLock('/stock/<body.items.*.productId>')
  order(@Body() body: { items: Array<{ productId: string }> }) {
    return inside.run(gate, () => ({ items: body.items.length }));
  }
}

describe('decorator forms of the lock family', () => {
  const namespace = testNamespace('lock-kinds');
  const lockApp = useLockApp(
    { controllers: [CatalogController], providers: [CatalogService] },
    { namespace },
  );
  let other: ZkLockClient;
  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  });
  afterAll(() => other.close());
  beforeEach(() => {
    inside.most = 0;
    (gate as { opened: Promise<void> }).opened = new Promise((r) => (gate.open = r));
  });

  const service = () => lockApp.app.get(CatalogService);

  it("mode: 'read' lets readers in together, on a service and on a route; 'write' excludes them", async () => {
    const reads = [service().read('c1'), service().read('c1')];
    const http = request(lockApp.app.getHttpServer()).get('/catalog/c1');
    const answered = http.then((res) => res);
    await waitFor(() => inside.now === 3, 'three readers inside at once');
    expect(await other.writeLock('/catalog/c1').tryAcquire()).toBeNull();
    const write = service().write('c1');
    gate.open();
    await Promise.all(reads);
    expect((await answered).body).toEqual({ id: 'c1' });
    expect(await write).toBe('c1');
    expect(inside.most).toBe(3);
  });

  it('@DistributedSemaphore keeps at most maxLeases calls inside', async () => {
    const calls = [1, 2, 3].map(() => service().render());
    await waitFor(() => inside.now === 2, 'two calls inside');
    gate.open();
    expect(await Promise.all(calls)).toEqual(['rendered', 'rendered', 'rendered']);
    expect(inside.most).toBe(2);
  });

  it('a path function returning several paths holds them all, with no deadlock in opposite orders', async () => {
    const calls = [service().transfer('a', 'b'), service().transfer('b', 'a')];
    await waitFor(() => inside.now === 1, 'one transfer inside');
    expect(await other.tryAcquire('/accounts/a')).toBeNull();
    expect(await other.tryAcquire('/accounts/b')).toBeNull();
    gate.open();
    expect(await Promise.all(calls)).toEqual(['a->b', 'b->a']);
    expect(inside.most).toBe(1);
  });

  it('a template with <list.*.field> holds one path per element, as a multi-path lock', async () => {
    const legs = (...accounts: string[]) => accounts.map((account) => ({ account, amount: 1 }));
    const calls = [service().settle(legs('x', 'y', 'x')), service().settle(legs('y', 'x'))];
    await waitFor(() => inside.now === 1, 'one settlement inside');
    expect(await other.tryAcquire('/accounts/x')).toBeNull();
    expect(await other.tryAcquire('/accounts/y')).toBeNull();
    gate.open();
    expect(await Promise.all(calls)).toEqual(['x+y+x', 'y+x']);
    expect(inside.most).toBe(1);
  });

  it('a route template with <body.items.*.productId> locks every item; bad lists are a 400', async () => {
    const server = lockApp.app.getHttpServer();
    const items = [{ productId: 'p1' }, { productId: 'p/2' }];
    const answered = request(server).post('/catalog/orders').send({ items });
    const response = answered.then((res) => res);
    await waitFor(() => inside.now === 1, 'the order inside');
    expect(await other.tryAcquire('/stock/p1')).toBeNull();
    expect(await other.tryAcquire('/stock/p%2F2')).toBeNull(); // each value stays one segment
    gate.open();
    expect((await response).body).toEqual({ items: 2 });
    for (const [body, reason] of [
      [{ items: [] }, 'body.items is empty, so there is nothing to lock'],
      [{ items: 'p1' }, 'body.items is not an array; send a list'],
      [{}, 'body.items is missing; send a list'],
      [{ items: [{ productId: 'p1' }, { sku: 'p2' }] }, 'element 1 of body.items'],
    ] as const) {
      const logs = captureLogs();
      try {
        const res = await request(server).post('/catalog/orders').send(body).expect(400);
        expect(res.body).toMatchObject({ code: 'INVALID_LOCK_PATH' });
        expect(logs.lines.map((l) => l.message).join('\n')).toContain(reason);
      } finally {
        logs.restore();
      }
    }
    expect(inside.now).toBe(0);
  });

  it('bad options fail when the class is defined, naming Class.method', () => {
    expect(() => {
      class Bad {
        @DistributedLock('/x/<id>', { mode: 'upgrade' as 'read' })
        m(id: string) {
          return id;
        }
      }
      return Bad;
    }).toThrow(
      new ZkLockError(
        `@DistributedLock on Bad.m: mode must be 'read' or 'write' (got "upgrade"); leave it out for the mutex.`,
      ),
    );
    expect(() => {
      class Limit {
        @DistributedSemaphore('/sem/x', { maxLeases: 0 })
        m() {
          return 1;
        }
      }
      return Limit;
    }).toThrow(/@DistributedSemaphore on Limit.m: maxLeases must be an integer >= 1/);
    expect(() => {
      class Many {
        @DistributedLock('/x/<ids.*>', { mode: 'read' })
        m(ids: string[]) {
          return ids;
        }
      }
      return Many;
    }).toThrow(/@DistributedLock on Many.m: "<ids.\*>" locks several paths at once/);
  });
});
