/**
 * A lock error answers with the transport's status and a stable code from
 * wherever it was thrown while a request is handled: a plain controller calling a
 * `@DistributedLock` service method, `LockService` in a guard, a service method missing a
 * template value. The other holder is another ZooKeeper session. Client bodies carry
 * `statusCode`, `code`, a short public message and the lock's name, never the ZooKeeper address
 * or advice meant for the developer. A filter of the application's own still wins.
 */
import {
  ArgumentsHost,
  CanActivate,
  Catch,
  ConflictException,
  Controller,
  ExceptionFilter,
  HttpException,
  Get,
  Injectable,
  INestApplication,
  Logger,
  Module,
  Param,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import {
  DistributedLock,
  LockHandle,
  LockService,
  LockTimeoutError,
  ZkLockClient,
  ZkLockModule,
} from '../../lib';
import { capturingLogger, LogLine, testNamespace, zkConnect } from './support/nest-app';

const WAIT_MS = 300;

@Injectable()
class OrderService {
  @DistributedLock('/locks/order:<id>', { waitTimeoutMs: WAIT_MS })
  async pay(id: string): Promise<string> {
    return `paid ${id}`;
  }

  @DistributedLock('/locks/order:<0.id>', { waitTimeoutMs: WAIT_MS })
  async payNothing(_order: { id?: string }): Promise<string> {
    return 'never';
  }
}

/** Takes the lock itself, through LockService, before the handler runs. */
@Injectable()
class OrderGuard implements CanActivate {
  constructor(private readonly locks: LockService) {}
  canActivate(): Promise<boolean> {
    return this.locks.withLock('/locks/order:guarded', () => true, { waitTimeoutMs: WAIT_MS });
  }
}

/** The application's own answer to a lock conflict, which must win over the module's. */
@Catch(ConflictException, LockTimeoutError)
class TeapotFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse();
    const body = { mine: true, kind: (error as Error).constructor.name };
    // Express and Fastify answer differently.
    if (typeof reply.code === 'function') void reply.code(418).send(body);
    else reply.status(418).json(body);
  }
}

@Controller('orders')
class OrdersController {
  constructor(private readonly orders: OrderService) {}

  @Get(':id/pay')
  pay(@Param('id') id: string): Promise<string> {
    return this.orders.pay(id);
  }

  @Get('missing')
  missing(): Promise<string> {
    return this.orders.payNothing({});
  }

  @Get('guarded')
  @UseGuards(OrderGuard)
  guarded(): string {
    return 'in';
  }

  /** No waitTimeoutMs here nor in the module: a route handler's default applies. */
  @Get(':id/slow')
  @DistributedLock('/locks/slow:<id>')
  slow(@Param('id') id: string): string {
    return id;
  }
}

@Controller('own')
@UseFilters(TeapotFilter)
class OwnFilterController {
  constructor(private readonly orders: OrderService) {}

  @Get(':id/pay')
  pay(@Param('id') id: string): Promise<string> {
    return this.orders.pay(id);
  }

  @Get('guarded')
  @UseGuards(OrderGuard)
  guarded(): string {
    return 'in';
  }
}

const PLATFORMS = ['express', 'fastify'] as const;
type Platform = (typeof PLATFORMS)[number];

/** Each platform's app, the other instance holding the orders' locks, and its slow request. */
interface PlatformApp {
  app: INestApplication;
  other: ZkLockClient;
  url: string;
  held: LockHandle[];
  /** The route handler's default wait (30 s) runs beside the other tests, started in beforeAll. */
  slow: Promise<request.Response | Error>;
  /** Its lock's id: one per platform, so each finds its own log line. */
  slowId: number;
}

async function startPlatform(platform: Platform, slowId: number): Promise<PlatformApp> {
  const namespace = testNamespace(`transport-errors-${platform}`);
  @Module({
    imports: [ZkLockModule.forRoot({ connectionString: zkConnect(), namespace, telemetry: false })],
    controllers: [OrdersController, OwnFilterController],
    providers: [OrderService, OrderGuard],
  })
  class AppModule {}
  const app =
    platform === 'fastify'
      ? await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
          logger: false,
        })
      : await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  // Another instance: its own ZooKeeper session holds the orders' locks.
  const other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  const held: LockHandle[] = [];
  for (const path of ['/locks/order:7', '/locks/order:guarded', `/locks/slow:${slowId}`]) {
    held.push(await other.acquire(path));
  }
  return { app, other, url, held, slowId, slow: Promise.resolve(new Error('not started')) };
}

describe('lock errors over HTTP', () => {
  const apps = new Map<Platform, PlatformApp>();
  /** Every line Nest's Logger is given while these apps run; a test reads the lines of its own. */
  const logged: LogLine[] = [];

  beforeAll(async () => {
    for (const [i, platform] of PLATFORMS.entries()) {
      apps.set(platform, await startPlatform(platform, i + 1));
    }
    // After the apps: creating one with `logger: false` turns the static Logger off.
    Logger.overrideLogger(capturingLogger(logged));
    for (const platform of apps.values()) {
      platform.slow = request(platform.url)
        .get(`/orders/${platform.slowId}/slow`)
        .then(
          (res) => res,
          (err: Error) => err,
        );
    }
  });

  afterAll(async () => {
    for (const { app, other, held, slow } of apps.values()) {
      await slow;
      await Promise.all(held.map((lock) => lock.release()));
      await other.close();
      await app.close();
    }
    Logger.overrideLogger(['error']);
  });

  describe.each(PLATFORMS)('on %s', (platform) => {
    const url = (): string => apps.get(platform)!.url;

    it('a plain controller calling a locked service answers 409 with code LOCK_TIMEOUT', async () => {
      const res = await request(url()).get('/orders/7/pay');
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        statusCode: 409,
        code: 'LOCK_TIMEOUT',
        message: expect.any(String),
        lock: '/locks/order:7',
      });
      // Written for a client: no advice for the developer, no ZooKeeper address.
      expect(res.text).not.toMatch(/waitTimeoutMs|tryAcquire|onBusy|127\.0\.0\.1|localhost/);
    });

    it("logs the developer's message once, with advice that fits how the lock was taken", async () => {
      const from = logged.length;
      await request(url()).get('/orders/7/pay').expect(409);
      await request(url()).get('/orders/guarded').expect(409);
      const lines = logged.slice(from);
      const about = (path: string) =>
        lines.filter((l) => l.message.includes(`"${path}"`) && l.level !== 'verbose');
      // The decorated service method: its own options, not tryAcquire.
      expect(about('/locks/order:7')).toEqual([
        expect.objectContaining({ level: 'warn', context: 'ZkLock', stack: false }),
      ]);
      expect(about('/locks/order:7')[0].message).toMatch(
        /Timed out after 300 ms .*OrderService\.pay.*onBusy: 'skip'/,
      );
      expect(about('/locks/order:7')[0].message).not.toContain('tryAcquire');
      // LockService.withLock in a guard: the core's advice.
      expect(about('/locks/order:guarded')).toHaveLength(1);
      expect(about('/locks/order:guarded')[0].message).toContain('tryAcquire');
    });

    it('a route handler with no waitTimeoutMs anywhere answers 409 after 30 s, not never', async () => {
      const { slow, slowId } = apps.get(platform)!;
      const res = await slow;
      if (res instanceof Error) throw res;
      expect(res.body).toMatchObject({
        statusCode: 409,
        code: 'LOCK_TIMEOUT',
        lock: `/locks/slow:${slowId}`,
      });
      const line = logged.find(
        (l) => l.level === 'warn' && l.message.includes(`"/locks/slow:${slowId}"`),
      );
      expect(line?.message).toContain('Timed out after 30000 ms');
    });

    it('the same service answers when the lock is free', async () => {
      await request(url()).get('/orders/8/pay').expect(200, 'paid 8');
    });

    it('a guard taking the lock through LockService answers 409 with the code', async () => {
      const res = await request(url()).get('/orders/guarded');
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ statusCode: 409, code: 'LOCK_TIMEOUT' });
    });

    it("a service method's missing template value answers 400 INVALID_LOCK_PATH", async () => {
      const res = await request(url()).get('/orders/missing');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, code: 'INVALID_LOCK_PATH' });
      expect(res.text).not.toMatch(/OrderService|payNothing/);
    });

    it("the application's own filter wins, for a service's error and a guard's", async () => {
      const fromService = await request(url()).get('/own/7/pay');
      expect(fromService.status).toBe(418);
      expect(fromService.body).toEqual({ mine: true, kind: 'ConflictException' });
      const fromGuard = await request(url()).get('/own/guarded');
      expect(fromGuard.status).toBe(418);
      expect(fromGuard.body).toEqual({ mine: true, kind: 'LockTimeoutError' });
    });
  });
});

/** Takes a lock whose path is no valid path: InvalidLockPathError from a guard. */
@Injectable()
class BadPathGuard implements CanActivate {
  constructor(private readonly locks: LockService) {}
  canActivate(): Promise<boolean> {
    return this.locks.withLock('/locks//bad', () => true);
  }
}

/** An application's global filters, as APP_FILTER of its own module. */
@Catch(LockTimeoutError)
class NamingFilter implements ExceptionFilter {
  catch(_error: LockTimeoutError, host: ArgumentsHost): void {
    host.switchToHttp().getResponse().status(418).json({ mine: 'naming' });
  }
}

@Catch(HttpException)
class HttpFormatFilter implements ExceptionFilter {
  catch(error: HttpException, host: ArgumentsHost): void {
    const { code } = error.getResponse() as { code?: string };
    host.switchToHttp().getResponse().status(error.getStatus()).json({ mine: 'http', code });
  }
}

@Controller('app-filters')
class AppFiltersController {
  constructor(private readonly orders: OrderService) {}

  @Get('guarded')
  @UseGuards(OrderGuard)
  guarded(): string {
    return 'in';
  }

  @Get('bad')
  @UseGuards(BadPathGuard)
  bad(): string {
    return 'in';
  }

  @Get(':id/pay')
  pay(@Param('id') id: string): Promise<string> {
    return this.orders.pay(id);
  }
}

describe("the application's APP_FILTERs win over the module's", () => {
  const namespace = testNamespace('transport-errors-app-filter');
  let app: INestApplication;
  let other: ZkLockClient;
  let held: LockHandle[] = [];

  beforeAll(async () => {
    @Module({
      imports: [
        ZkLockModule.forRoot({ connectionString: zkConnect(), namespace, telemetry: false }),
      ],
      controllers: [AppFiltersController],
      providers: [
        OrderService,
        OrderGuard,
        BadPathGuard,
        { provide: APP_FILTER, useClass: NamingFilter },
        { provide: APP_FILTER, useClass: HttpFormatFilter },
      ],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.init();
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
    held = [await other.acquire('/locks/order:7'), await other.acquire('/locks/order:guarded')];
  });

  afterAll(async () => {
    await Promise.all(held.map((lock) => lock.release()));
    await other?.close();
    await app?.close();
  });

  it('a filter naming the lock error gets it from a guard', async () => {
    await request(app.getHttpServer()).get('/app-filters/guarded').expect(418, { mine: 'naming' });
  });

  it("a filter of HttpExceptions gets the transport's exception, from a guard or a service", async () => {
    await request(app.getHttpServer())
      .get('/app-filters/bad')
      .expect(400, { mine: 'http', code: 'INVALID_LOCK_PATH' });
    await request(app.getHttpServer())
      .get('/app-filters/7/pay')
      .expect(409, { mine: 'http', code: 'LOCK_TIMEOUT' });
  });
});
