/**
 * Property-based against a real ZooKeeper: arbitrary values (any UTF-16 text, lone
 * surrogates, "..", "/", numbers, objects, nothing) given to a decorated service method either
 * lock exactly the path with each value encoded into its own segment, below the namespace, or
 * fail with an InvalidLockPathError naming the template before anything is locked.
 */
import { Injectable } from '@nestjs/common';
import fc from 'fast-check';
import { DistributedLock, encodePathSegment, InvalidLockPathError, LockService } from '../../lib';
import { ZkAdmin } from '../core/support/zk-admin';
import { testNamespace, useLockApp, zkConnect } from './support/nest-app';

const TEMPLATE = '/orders/<orderId>/sku:<sku>';

@Injectable()
class OrdersService {
  constructor(private readonly locks: LockService) {}

  /** Reports which path it holds, as the test expects it from the values; `whileHeld` runs under the lock. */
  @DistributedLock(TEMPLATE)
  async place(
    orderId: unknown,
    sku: unknown,
    expected: string,
    whileHeld: () => Promise<void>,
  ): Promise<boolean> {
    await whileHeld();
    return this.locks.isHeld(expected);
  }
}

const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));
const value = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: anyUnit, maxLength: 10 }) },
  { weight: 2, arbitrary: fc.constantFrom('../../admin', '..', '.', 'a/b', '/', '%2F', '\uDC00') },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean()) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, '', {}, [1]) },
);

const usable = (v: unknown): boolean =>
  v !== undefined &&
  v !== null &&
  v !== '' &&
  typeof v !== 'object' &&
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(String(v));

describe('template values (property-based, real ZooKeeper)', () => {
  const namespace = testNamespace('template-values');
  const fixture = useLockApp({ providers: [OrdersService] }, { namespace });
  let admin: ZkAdmin;

  beforeAll(async () => (admin = await ZkAdmin.connect(zkConnect())));
  afterAll(async () => {
    await admin.removeTree(namespace);
    admin.close();
  });

  it('lock exactly their own segments below the namespace, or fail with a clear error', async () => {
    const orders = fixture.app.get(OrdersService);
    await fc.assert(
      fc.asyncProperty(value, value, async (orderId, sku) => {
        const expected =
          usable(orderId) && usable(sku)
            ? `/orders/${encodePathSegment(orderId)}/sku:${encodePathSegment(sku)}`
            : undefined;
        const acquiredBefore = fixture.acquired.length;
        // Read while held: an emptied lock path is a container the server may remove at once.
        let pathExisted: boolean | undefined;
        const whileHeld = async (): Promise<void> => {
          pathExisted = await admin.exists(`${namespace}${expected}`);
        };
        const outcome = await orders.place(orderId, sku, expected ?? '/none', whileHeld).then(
          (held) => ({ held }),
          (error: Error) => ({ error }),
        );
        if (expected === undefined) {
          expect('error' in outcome && outcome.error).toBeInstanceOf(InvalidLockPathError);
          expect('error' in outcome && outcome.error.message).toContain(TEMPLATE);
          expect(fixture.acquired.length).toBe(acquiredBefore); // nothing was locked
          return;
        }
        expect(outcome).toEqual({ held: true });
        // The lock path: one node per template segment (orders, the order, the sku), in the namespace.
        expect(pathExisted).toBe(true);
        expect(expected.split('/')).toHaveLength(4);
      }),
      { numRuns: 150 },
    );
  });
});
