/**
 * A user's decorated service unit-tested with `ZkLockTestingModule.forRoot()`, no
 * ZooKeeper server: the example of docs/nestjs/testing.md, run.
 */
import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { DistributedLock, LockLostError, LockService } from '../../lib';
import { InMemoryZooKeeper, ZkLockTestingModule } from '../../lib/testing';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

@Injectable()
class StockService {
  stock = 100;
  lostReason?: unknown;
  private release?: () => void;

  constructor(private readonly locks: LockService) {}

  /** Read-modify-write with an await inside: oversells without the lock. */
  @DistributedLock('/locks/product:<productId>')
  async deduct(productId: string, quantity: number): Promise<number> {
    const current = this.stock;
    await tick();
    this.stock = current - quantity;
    return this.stock;
  }

  @DistributedLock('/jobs/nightly-report', { onBusy: 'skip' })
  async nightlyReport(): Promise<string> {
    await new Promise<void>((resolve) => (this.release = resolve));
    return 'report';
  }

  finishReport(): void {
    this.release?.();
  }

  @DistributedLock('/locks/import')
  async longImport(): Promise<void> {
    const signal = this.locks.current('/locks/import')!.signal;
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    this.lostReason = signal.reason;
  }
}

describe('ZkLockTestingModule.forRoot(): decorated services without ZooKeeper', () => {
  let moduleRef: TestingModule;
  let service: StockService;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot()],
      providers: [StockService],
    }).compile();
    await moduleRef.init();
    service = moduleRef.get(StockService);
  });

  afterEach(() => moduleRef.close());

  it('serializes concurrent calls on one key: no oversell', async () => {
    await Promise.all(Array.from({ length: 20 }, () => service.deduct('apple', 1)));
    expect(service.stock).toBe(80);
  });

  it("skips a run while another holds the lock (onBusy: 'skip')", async () => {
    const first = service.nightlyReport();
    const waiting = async (): Promise<boolean> =>
      (await moduleRef.get(LockService).inspect('/jobs/nightly-report')).holder !== null;
    while (!(await waiting())) await tick();
    expect(await service.nightlyReport()).toBeUndefined(); // busy: skipped
    service.finishReport();
    expect(await first).toBe('report');
  });

  it('reports a lost lock to the holder when the test expires the sessions', async () => {
    const running = service.longImport();
    const locks = moduleRef.get(LockService);
    while ((await locks.inspect('/locks/import')).holder === null) await tick();
    moduleRef.get(InMemoryZooKeeper).expireSessions();
    await running;
    expect(service.lostReason).toBeInstanceOf(LockLostError);
  });

  it('stops the in-memory ZooKeeper with the module', async () => {
    const zookeeper = moduleRef.get(InMemoryZooKeeper);
    await service.deduct('pear', 1);
    await moduleRef.close();
    expect(zookeeper.sessionIds).toEqual([]);
    moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot()],
    }).compile();
  });
});
