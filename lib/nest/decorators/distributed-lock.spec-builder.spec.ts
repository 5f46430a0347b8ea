import { ZkLockError } from '../../core/errors';
import { DistributedLock } from './distributed-lock.decorator';
import { DistributedSemaphore } from './distributed-semaphore.decorator';

/** Defines a class whose method is decorated with `decorate`; returns the definition. */
const defining = (decorate: ReturnType<typeof DistributedLock>) => () => {
  class Reports {
    @decorate
    async nightly() {}
  }
  return Reports;
};

describe('onBusy and minHoldMs when the class is defined', () => {
  it.each([['sometimes'], ['SKIP'], [true], [null]])(
    'rejects onBusy %p naming Class.method',
    (bad) => {
      const define = defining(DistributedLock('/jobs/nightly', { onBusy: bad as 'skip' }));
      expect(define).toThrow(ZkLockError);
      expect(define).toThrow(
        `@DistributedLock on Reports.nightly: onBusy must be 'wait' or 'skip' (got ${JSON.stringify(bad)})`,
      );
    },
  );

  it('rejects a bad onBusy on a semaphore too', () => {
    const define = defining(
      DistributedSemaphore('/sem/render', { maxLeases: 2, onBusy: 'drop' as 'skip' }),
    );
    expect(define).toThrow(`Reports.nightly: onBusy must be 'wait' or 'skip' (got "drop")`);
  });

  it("rejects waitTimeoutMs with onBusy: 'skip' (it would be ignored)", () => {
    const define = defining(DistributedLock('/jobs/nightly', { onBusy: 'skip', waitTimeoutMs: 5 }));
    expect(define).toThrow(
      "@DistributedLock on Reports.nightly: waitTimeoutMs (5) has no effect with onBusy: 'skip'",
    );
  });

  it.each([[-1], [Number.NaN], [Infinity], [2 ** 31], ['5000']])('rejects minHoldMs %p', (bad) => {
    const define = defining(DistributedLock('/jobs/nightly', { minHoldMs: bad as number }));
    expect(define).toThrow(ZkLockError);
    expect(define).toThrow(
      `@DistributedLock on Reports.nightly: minHoldMs must be a number from 0 to 2147483647 (got ${String(bad)})`,
    );
  });

  it("accepts 'wait', 'skip' and a minHoldMs within a timer's range", () => {
    expect(defining(DistributedLock('/a', { onBusy: 'wait' }))).not.toThrow();
    expect(defining(DistributedLock('/a', { onBusy: 'skip', minHoldMs: 0 }))).not.toThrow();
    expect(
      defining(DistributedLock('/a', { onBusy: 'skip', minHoldMs: 2 ** 31 - 1 })),
    ).not.toThrow();
  });
});

describe('waitTimeoutMs when the class is defined', () => {
  it.each([[-1], [Number.NaN], [Infinity], [2 ** 31], ['5000']])(
    'rejects waitTimeoutMs %p, which every call would fail on',
    (bad) => {
      const define = defining(DistributedLock('/jobs/nightly', { waitTimeoutMs: bad as number }));
      expect(define).toThrow(ZkLockError);
      expect(define).toThrow(
        `@DistributedLock on Reports.nightly: waitTimeoutMs must be a number from 0 to 2147483647 (got ${String(bad)})`,
      );
    },
  );

  it('rejects a waitTimeoutMs out of range on a semaphore too', () => {
    const define = defining(
      DistributedSemaphore('/sem/render', { maxLeases: 2, waitTimeoutMs: 2 ** 31 }),
    );
    expect(define).toThrow(
      'Reports.nightly: waitTimeoutMs must be a number from 0 to 2147483647 (got 2147483648)',
    );
  });

  it("accepts a waitTimeoutMs within a timer's range", () => {
    expect(defining(DistributedLock('/a', { waitTimeoutMs: 0 }))).not.toThrow();
    expect(defining(DistributedLock('/a', { waitTimeoutMs: 2 ** 31 - 1 }))).not.toThrow();
  });
});
