import { Injectable } from '@nestjs/common';
import { isObservable, lastValueFrom, map, Observable, timer, toArray } from 'rxjs';
import {
  DistributedLock,
  encodePathSegment,
  InvalidLockPathError,
  LockEvents,
  LockService,
  LockTimeoutError,
  ZkLockClient,
} from '../../lib';
import { testNamespace, useLockApp, zkConnect } from './support/nest-app';

@Injectable()
class OrdersService {
  constructor(private readonly locks: LockService) {}

  @DistributedLock('/orders/<orderId>')
  async byName(orderId: string, _note?: string) {
    const path = `/orders/${encodePathSegment(orderId)}`;
    return { self: this instanceof OrdersService, held: this.locks.isHeld(path) };
  }

  @DistributedLock('/orders/<0.id>/line-<1>')
  async positional(order: { id: string }, line: number) {
    return this.locks.isHeld(`/orders/${order.id}/line-${line}`);
  }

  @DistributedLock((sku: string) => `/stock/${sku}`)
  async byFunction(sku: string, _qty: number) {
    return this.locks.isHeld(`/stock/${sku}`);
  }

  @DistributedLock('/orders/<order.id>')
  syncMethod(order: { id?: string }) {
    return `sync ${order.id}`;
  }

  readonly thrown: Error[] = [];

  @DistributedLock('/orders/<orderId>')
  async failing(orderId: string): Promise<never> {
    const error = new TypeError(`failed inside ${orderId}`);
    this.thrown.push(error);
    throw error;
  }

  @DistributedLock('/feeds/<feedId>')
  feed(feedId: string): Observable<string> {
    return timer(30).pipe(map(() => `${feedId} held: ${this.locks.isHeld(`/feeds/${feedId}`)}`));
  }

  @DistributedLock('/outer/<orderId>')
  @DistributedLock('/inner/<orderId>')
  async stacked(orderId: string) {
    return [this.locks.isHeld(`/outer/${orderId}`), this.locks.isHeld(`/inner/${orderId}`)];
  }

  @DistributedLock('/busy/<0>', { waitTimeoutMs: 300 })
  async busy(_key: string) {
    return 'ran';
  }
}

describe('@DistributedLock on a service method', () => {
  const namespace = testNamespace('service-decorator');
  const lockApp = useLockApp({ providers: [OrdersService] }, { namespace });
  const { acquired } = lockApp;
  let service: OrdersService;
  let locks: LockService;

  beforeAll(() => {
    locks = lockApp.locks;
    service = lockApp.app.get(OrdersService);
  });

  it('locks by the parameter a <name> names, keeping `this`, and reports wait and hold times', async () => {
    const released: LockEvents['released'][] = [];
    locks.on('released', (event) => released.push(event));
    await expect(service.byName('42')).resolves.toEqual({ self: true, held: true });
    expect(acquired.map((e) => e.path)).toEqual(['/orders/42']);
    expect(acquired[0].waitMs).toBeGreaterThanOrEqual(0);
    expect(released.map((e) => e.path)).toEqual(['/orders/42']);
    expect(released[0].holdMs).toBeGreaterThanOrEqual(0);
    expect(locks.isHeld('/orders/42')).toBe(false);
  });

  it('encodes the argument into one segment', async () => {
    await expect(service.byName('a/b')).resolves.toEqual({ self: true, held: true });
    expect(acquired.map((e) => e.path)).toEqual(['/orders/a%2Fb']);
  });

  it('locks by position: <0.id> and <1>', async () => {
    await expect(service.positional({ id: 'o-7' }, 3)).resolves.toBe(true);
    expect(acquired.map((e) => e.path)).toEqual(['/orders/o-7/line-3']);
  });

  it('locks by the path function called with the arguments', async () => {
    await expect(service.byFunction('sku-9', 1)).resolves.toBe(true);
    expect(acquired.map((e) => e.path)).toEqual(['/stock/sku-9']);
  });

  it('nests stacked decorators, outer first, both by parameter name', async () => {
    await expect(service.stacked('s1')).resolves.toEqual([true, true]);
    expect(acquired.map((e) => e.path)).toEqual(['/outer/s1', '/inner/s1']);
  });

  it('returns the value of a synchronous method as a promise', async () => {
    await expect(service.syncMethod({ id: 's' })).resolves.toBe('sync s');
  });

  it('rethrows the method error unchanged and releases the lock', async () => {
    const failed = service.failing('f');
    await expect(failed).rejects.toBeInstanceOf(TypeError);
    await expect(failed).rejects.toBe(service.thrown[0]);
    expect(locks.isHeld('/orders/f')).toBe(false);
    const other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
    try {
      const handle = await other.tryAcquire('/orders/f');
      expect(handle).not.toBeNull();
      await handle?.release();
    } finally {
      await other.close();
    }
  });

  it('holds the lock until a returned Observable completes, then gives its values', async () => {
    const result: unknown = await service.feed('f1');
    expect(isObservable(result)).toBe(true);
    expect(locks.isHeld('/feeds/f1')).toBe(false);
    expect(await lastValueFrom((result as Observable<string>).pipe(toArray()))).toEqual([
      'f1 held: true',
    ]);
    expect(acquired.map((e) => e.path)).toEqual(['/feeds/f1']);
  });

  it('fails with InvalidLockPathError before locking when a value is missing', async () => {
    await expect(service.syncMethod({})).rejects.toThrow(InvalidLockPathError);
    await expect(service.syncMethod({})).rejects.toThrow('the value of <order.id> is missing');
    expect(acquired).toEqual([]);
  });

  it('refuses, when the class is defined, a <name> no parameter of the method can give', () => {
    expect(() => {
      class Unknown {
        @DistributedLock('/orders/<nope>')
        async unknownName(orderId: string) {
          return orderId;
        }
      }
      return Unknown;
    }).toThrow('"<nope>" names no parameter of Unknown.unknownName (parameters: orderId)');
  });

  it('gives up with LockTimeoutError after the decorator waitTimeoutMs', async () => {
    const other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
    try {
      const handle = await other.acquire('/busy/k');
      const timeouts: LockEvents['timeout'][] = [];
      locks.on('timeout', (event) => timeouts.push(event));
      await expect(service.busy('k')).rejects.toThrow(LockTimeoutError);
      expect(timeouts).toEqual([
        { path: '/busy/k', waitTimeoutMs: 300, pathTemplate: '/busy/<0>' },
      ]);
      await handle.release();
      await expect(service.busy('k')).resolves.toBe('ran');
    } finally {
      await other.close();
    }
  });
});
