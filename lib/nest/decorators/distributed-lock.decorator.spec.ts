import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { InvalidLockPathError, ZkLockError } from '../../core/errors';
import { DistributedLock } from './distributed-lock.decorator';
import { DistributedLockInterceptor } from '../runtime/distributed-lock.wrapper';
import { lockSpecOf } from './distributed-lock.metadata';

describe('@DistributedLock when applied', () => {
  it('rejects a broken template with the class and method in the message', () => {
    const define = () => {
      class Orders {
        @DistributedLock('/locks/order:<id')
        update(_id: string) {}
      }
      return Orders;
    };
    expect(define).toThrow(InvalidLockPathError);
    expect(define).toThrow('"<" at index 13 is never closed with ">" (template of Orders.update)');
  });

  it('rejects a negative waitTimeoutMs', () => {
    const define = () => {
      class Orders {
        @DistributedLock('/locks/<id>', { waitTimeoutMs: -1 })
        update(_id: string) {}
      }
      return Orders;
    };
    expect(define).toThrow(ZkLockError);
    expect(define).toThrow(
      'Orders.update: waitTimeoutMs must be a number from 0 to 2147483647 (got -1)',
    );
  });

  it('records its spec and adds the interceptor once, even when stacked', () => {
    // (Stacked wrappers still resolve <name> from the user's method: see the service e2e spec.)
    class Orders {
      @DistributedLock('/outer/<0>')
      @DistributedLock('/inner/<0>')
      update(_id: string) {}
    }
    const method = Orders.prototype.update;
    expect(lockSpecOf(method)!.template!.source).toBe('/outer/<0>');
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, method)).toEqual([
      DistributedLockInterceptor,
    ]);
  });

  it('records a spec complete and frozen when the class is defined', () => {
    const options = { waitTimeoutMs: 50 };
    class Orders {
      @DistributedLock('/locks/order:<id>/<1>', options)
      update(id: string, _qty: number) {
        return id;
      }
    }
    const spec = lockSpecOf(Orders.prototype.update)!;
    expect(spec).toMatchObject({
      where: 'Orders.update',
      owner: 'Orders',
      sources: { byName: { id: 0 } },
      parameterNames: ['id', '_qty'],
      returnsObservable: false,
      metricsTemplate: '/locks/order:<id>/<1>',
      options: { waitTimeoutMs: 50 },
    });
    expect(Object.isFrozen(spec)).toBe(true);
    expect(Object.isFrozen(spec.options)).toBe(true);
    expect(Object.isFrozen(spec.sources)).toBe(true);
    expect(Object.isFrozen(spec.parameterNames)).toBe(true);
    expect(Object.isFrozen(options)).toBe(false); // the caller's object is copied, not frozen
  });

  it('type-checks the function form against the method parameters', () => {
    // Compile-time check (tsc --noEmit covers this file): a mismatch is a type error.
    class Orders {
      @DistributedLock((id: string) => `/locks/order:${id}`)
      async cancel(_id: string, _reason?: string) {}

      // @ts-expect-error the function takes a string, the method a number
      @DistributedLock((id: string) => `/locks/order:${id}`)
      async settle(_id: number) {}
    }
    expect(Orders.prototype.cancel.name).toBe('cancel');
  });
});
