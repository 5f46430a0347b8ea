/**
 * Two feature modules that both need locks. The recommended shape, one forRoot() in a shared
 * module, gives one session: a handler of one module and a service of the other share a lock.
 * forRoot() imported in each module gives two sessions; each class then locks through the
 * LockService its own module injects, so `locks.current()` always shows the lock it holds.
 */
import {
  Controller,
  INestApplication,
  Injectable,
  Logger,
  Module,
  Param,
  Post,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib';
import { testNamespace, zkConnect } from './support/nest-app';
import { scaled } from '../support/time-scale';
import { vi, type MockInstance } from 'vitest';

const namespace = testNamespace('two-modules');

function lockModule() {
  return ZkLockModule.forRoot({
    connectionString: zkConnect(),
    namespace,
    waitTimeoutMs: scaled(2_000),
  });
}

@Injectable()
class StockService {
  constructor(readonly locks: LockService) {}

  @DistributedLock('/sku/<sku>')
  async reserve(sku: string) {
    return { token: String(this.locks.current(`/sku/${sku}`)?.fencingToken) };
  }
}

@Controller('sku')
class SkuController {
  constructor(
    readonly locks: LockService,
    private readonly stock: StockService,
  ) {}

  @Post(':sku')
  @DistributedLock('/sku/<sku>')
  async reserve(@Param('sku') sku: string) {
    const outer = String(this.locks.current(`/sku/${sku}`)?.fencingToken);
    return { outer, inner: (await this.stock.reserve(sku)).token };
  }

  @Post(':sku/direct')
  direct(@Param('sku') sku: string) {
    return this.stock.reserve(sku);
  }
}

async function boot(root: new () => object): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [root] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  return app.init();
}

describe('one forRoot() in a shared module, imported by two feature modules', () => {
  const Locks = lockModule();

  @Module({ imports: [Locks], exports: [Locks] })
  class LocksModule {}

  @Module({ imports: [LocksModule], providers: [StockService], exports: [StockService] })
  class StockModule {}

  @Module({ imports: [LocksModule, StockModule], controllers: [SkuController] })
  class ShopModule {}

  let app: INestApplication;
  beforeAll(async () => (app = await boot(ShopModule)));
  afterAll(() => app.close());

  it('gives both modules one LockService: the service re-enters the handler lock', async () => {
    expect(app.get(StockService).locks).toBe(app.get(SkuController).locks);
    const res = await request(app.getHttpServer()).post('/sku/a').expect(201);
    expect(res.body.inner).toBe(res.body.outer);
    expect(res.body.outer).toMatch(/^\d+$/);
  });
});

describe('forRoot() imported in each of two modules', () => {
  @Module({ imports: [lockModule()], providers: [StockService], exports: [StockService] })
  class StockModule {}

  @Module({ imports: [lockModule(), StockModule], controllers: [SkuController] })
  class ShopModule {}

  let app: INestApplication;
  let warn: MockInstance;
  beforeAll(async () => {
    warn = vi.spyOn(Logger.prototype, 'warn');
    app = await boot(ShopModule);
  });
  afterAll(async () => {
    warn.mockRestore();
    await app.close();
  });

  it('warns once, at bootstrap, that each forRoot() opens its own session', () => {
    const said = warn.mock.calls.filter(([message]) =>
      String(message).includes('ZkLockModule.forRoot() is imported 2 times in this application'),
    );
    expect(said).toHaveLength(1);
  });

  it("locks each class through its own module's LockService", async () => {
    const stock = app.get(StockService).locks;
    expect(stock).not.toBe(app.get(SkuController).locks);
    const res = await request(app.getHttpServer()).post('/sku/b/direct').expect(201);
    expect(res.body.token).toMatch(/^\d+$/);
    expect(stock.isHeld('/sku/b')).toBe(false);
  });

  it('does not share a lock between the two sessions: the service waits for the handler', async () => {
    const res = await request(app.getHttpServer()).post('/sku/c').expect(409);
    expect(res.body).toMatchObject({ code: 'LOCK_TIMEOUT', lock: '/sku/c' });
  });
});
