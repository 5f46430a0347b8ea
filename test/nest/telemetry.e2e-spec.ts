/**
 * OpenTelemetry metrics and spans of ZkLockModule (docs/guides/observability.md), recorded by the
 * SDK's in-memory reader and span exporter, on a real ZooKeeper. Labels are path templates.
 */
import { Injectable } from '@nestjs/common';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { randomUUID } from 'node:crypto';
import {
  DistributedLock,
  DistributedSemaphore,
  InvalidLockOptionsError,
  LockService,
  LockTimeoutError,
  ZkLockTelemetry,
} from '../../lib';
import { ZkAdmin } from '../core/support/zk-admin';
import { TestTelemetry } from '../support/otel';
import {
  createLockApp,
  Gate,
  testNamespace,
  useLockApp,
  waitFor,
  zkConnect,
} from './support/nest-app';

const namespace = testNamespace('telemetry');
const ORDER = '/orders/order:<orderId>';
const JOB = '/jobs/job:<name>';
const SEMAPHORE_MUTEX = '/sem/render:<kind>/locks';
const path = (label: string) => ({ 'zk_lock.path': label });

@Injectable()
class Payments {
  @DistributedLock(ORDER)
  async pay(orderId: string, gate?: Gate) {
    await gate?.opened;
    return orderId;
  }

  @DistributedSemaphore('/sem/render:<kind>', { maxLeases: 2 })
  async render(kind: string) {
    return kind;
  }

  /** Waits briefly: LockTimeoutError while the order is held. */
  @DistributedLock(ORDER, { waitTimeoutMs: 200 })
  async payNow(orderId: string) {
    return orderId;
  }

  /** Skipped (undefined) while the order is held. */
  @DistributedLock(ORDER, { onBusy: 'skip' })
  async payIfFree(orderId: string) {
    return orderId;
  }
}

describe('telemetry (OpenTelemetry SDK, in-memory)', () => {
  const otel = new TestTelemetry();
  const contextManager = new AsyncLocalStorageContextManager();
  const fixture = useLockApp(
    { providers: [Payments] },
    {
      namespace,
      telemetry: {
        meterProvider: otel.meterProvider,
        tracerProvider: otel.tracerProvider,
        pathTemplates: [JOB],
      },
    },
  );
  const payments = () => fixture.app.get(Payments);
  /** Concrete ids, to look for in every label afterwards. */
  const ids = Array.from({ length: 4 }, () => `id-${randomUUID()}`);

  beforeAll(() => context.setGlobalContextManager(contextManager.enable()));
  afterAll(async () => {
    context.disable();
    await otel.shutdown();
  });

  it('labels with the templates of @DistributedLock methods and of the pathTemplates option', () => {
    expect(fixture.app.get(ZkLockTelemetry).pathTemplates.sort()).toEqual(
      [JOB, ORDER, SEMAPHORE_MUTEX].sort(),
    );
  });

  it("labels a semaphore's mutex with its template (its leases are not lock events)", async () => {
    await payments().render(ids[0]);
    expect(await otel.value('zk_lock.acquired', path(SEMAPHORE_MUTEX))).toBe(1);
  });

  it('counts 3 acquisitions and 1 timeout under the template, with wait and hold times', async () => {
    for (const id of ids.slice(0, 3)) await payments().pay(id);
    const gate = new Gate();
    const holding = payments().pay(ids[3], gate);
    await waitFor(() => fixture.acquired.length === 4, 'the 4th order held');
    await expect(payments().payNow(ids[3])).rejects.toBeInstanceOf(LockTimeoutError);
    gate.open();
    await holding;

    expect(await otel.value('zk_lock.acquired', path(ORDER))).toBe(4);
    expect(await otel.value('zk_lock.timeouts', path(ORDER))).toBe(1);
    const waits = { ...path(ORDER), 'zk_lock.outcome': 'acquired' };
    expect(await otel.value('zk_lock.wait.duration', waits)).toBe(4);
    expect(
      await otel.value('zk_lock.wait.duration', { ...path(ORDER), 'zk_lock.outcome': 'timeout' }),
    ).toBe(1);
    await waitFor(
      async () => (await otel.value('zk_lock.hold.duration', path(ORDER))) === 4,
      '4 hold times recorded (released after the node is deleted)',
    );
  });

  it('reports waiters and holders by template while they wait and hold, 0 after', async () => {
    const gate = new Gate();
    const id = `id-${randomUUID()}`;
    const first = payments().pay(id, gate);
    await waitFor(async () => (await otel.value('zk_lock.holders', path(ORDER))) === 1, '1 holder');
    const second = payments().pay(id);
    await waitFor(async () => (await otel.value('zk_lock.waiters', path(ORDER))) === 1, '1 waiter');
    gate.open();
    await Promise.all([first, second]);
    await waitFor(
      async () =>
        (await otel.value('zk_lock.holders', path(ORDER))) === 0 &&
        (await otel.value('zk_lock.waiters', path(ORDER))) === 0,
      'no holder and no waiter',
    );
  });

  it('counts a try that finds the lock busy as skipped, labelled by a pathTemplates entry', async () => {
    const jobPath = `/jobs/job:${randomUUID()}`;
    const held = await fixture.locks.acquire(jobPath);
    try {
      expect(await fixture.locks.tryAcquire(jobPath)).toBeNull();
    } finally {
      await held.release();
    }
    expect(await otel.value('zk_lock.skipped', path(JOB))).toBe(1);
    expect(await otel.value('zk_lock.acquired', path(JOB))).toBe(1);
  });

  it("counts a decorated method skipped by onBusy 'skip' as skipped, not as a timeout", async () => {
    const id = `id-${randomUUID()}`;
    const timeoutsBefore = await otel.value('zk_lock.timeouts', path(ORDER));
    const skippedBefore = await otel.value('zk_lock.skipped', path(ORDER));
    const gate = new Gate();
    const holding = payments().pay(id, gate);
    await waitFor(async () => (await otel.value('zk_lock.holders', path(ORDER))) === 1, 'held');
    expect(await payments().payIfFree(id)).toBeUndefined();
    gate.open();
    await holding;
    expect(await otel.value('zk_lock.skipped', path(ORDER))).toBe(skippedBefore + 1);
    expect(await otel.value('zk_lock.timeouts', path(ORDER))).toBe(timeoutsBefore);
    const busy = { ...path(ORDER), 'zk_lock.outcome': 'busy' };
    expect(await otel.value('zk_lock.wait.duration', busy)).toBeGreaterThanOrEqual(1);
  });

  it("labels a path that matches no template 'other'", async () => {
    await fixture.locks.withLock(`/misc/${randomUUID()}`, () => undefined);
    expect(await otel.value('zk_lock.acquired', path('other'))).toBe(1);
  });

  it('counts a lock lost because another client deleted its node, with the reason', async () => {
    const lockPath = `/orders/order:${randomUUID()}`;
    const admin = await ZkAdmin.connect(zkConnect());
    try {
      const lock = await fixture.locks.acquire(lockPath);
      const [node] = await admin.children(`${namespace}${lockPath}`);
      await admin.remove(`${namespace}${lockPath}/${node}`);
      // The session the path is on: the client's one (the default).
      const session = 0;
      const labels = {
        ...path(ORDER),
        'zk_lock.reason': 'node-deleted',
        'zk_lock.session': session,
      };
      await waitFor(async () => (await otel.value('zk_lock.lost', labels)) === 1, '1 lost lock');
      await lock.release();
    } finally {
      admin.close();
    }
  });

  it('puts no concrete path in any label', async () => {
    const names = await otel.names();
    expect(names).toEqual(
      expect.arrayContaining([
        'zk_lock.wait.duration',
        'zk_lock.hold.duration',
        'zk_lock.acquired',
        'zk_lock.timeouts',
        'zk_lock.lost',
        'zk_lock.skipped',
        'zk_lock.waiters',
        'zk_lock.holders',
      ]),
    );
    const labels = new Set<string>();
    for (const name of names) {
      for (const point of await otel.points(name))
        labels.add(String(point.attributes['zk_lock.path']));
    }
    expect([...labels].sort()).toEqual([JOB, ORDER, SEMAPHORE_MUTEX, 'other'].sort());
    const spans = JSON.stringify(otel.spans.getFinishedSpans().map((s) => s.attributes));
    for (const id of ids) expect(spans).not.toContain(id);
  });

  it("traces each wait as a child of the caller's span, with template, outcome and status", async () => {
    otel.spans.reset();
    const tracer = otel.tracerProvider.getTracer('test');
    const id = `id-${randomUUID()}`;
    const parent = await tracer.startActiveSpan('request', async (span) => {
      await payments().pay(id);
      await payments().payNow(id);
      span.end();
      return span.spanContext();
    });
    const gate = new Gate();
    const holding = payments().pay(id, gate);
    await waitFor(async () => (await otel.value('zk_lock.holders', path(ORDER))) === 1, 'held');
    await expect(payments().payNow(id)).rejects.toBeInstanceOf(LockTimeoutError);
    gate.open();
    await holding;

    const waits = otel.spans.getFinishedSpans().filter((s) => s.name === 'zk_lock.wait');
    expect(waits.map((s) => s.attributes)).toEqual([
      { ...path(ORDER), 'zk_lock.outcome': 'acquired' },
      { ...path(ORDER), 'zk_lock.outcome': 'acquired' },
      { ...path(ORDER), 'zk_lock.outcome': 'acquired' },
      { ...path(ORDER), 'zk_lock.outcome': 'timeout' },
    ]);
    expect(waits.slice(0, 2).map((s) => s.parentSpanContext?.spanId)).toEqual([
      parent.spanId,
      parent.spanId,
    ]);
    expect(waits[0].spanContext().traceId).toBe(parent.traceId);
    expect(waits[3].status).toEqual({ code: SpanStatusCode.ERROR, message: 'LockTimeoutError' });
    expect(waits[0].status.code).toBe(SpanStatusCode.UNSET);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});

describe('telemetry lifecycle', () => {
  it('removes its listeners and gauge callbacks when the application closes', async () => {
    const otel = new TestTelemetry();
    const app = await createLockApp(
      { providers: [Payments] },
      { namespace, telemetry: { meterProvider: otel.meterProvider } },
    );
    const client = app.get(LockService).client;
    try {
      await app.get(Payments).pay('1');
      expect(otel.liveCallbacks).toBe(2);
      expect(client.listenerCount('waited')).toBe(1);
    } finally {
      await app.close();
      await otel.shutdown();
    }
    expect(otel.liveCallbacks).toBe(0);
    expect(client.listenerCount('waited')).toBe(0);
  });

  it('attaches nothing with telemetry: false', async () => {
    const app = await createLockApp({ providers: [Payments] }, { namespace, telemetry: false });
    try {
      await app.get(Payments).pay('1');
      expect(app.get(LockService).client.listenerCount('waited')).toBe(0);
      expect(app.get(ZkLockTelemetry).pathTemplates).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it.each([
    [
      'a telemetry option that is not an object',
      { telemetry: 'on' },
      /telemetry must be false or an object, got string/,
    ],
    [
      'pathTemplates that is not an array',
      { telemetry: { pathTemplates: '/a/<b>' } },
      /telemetry.pathTemplates: it must be an array/,
    ],
    [
      'a meterProvider without getMeter()',
      { telemetry: { meterProvider: {} } },
      /telemetry.meterProvider: it has no getMeter\(\) method/,
    ],
    [
      'a tracerProvider without getTracer()',
      { telemetry: { tracerProvider: 1 } },
      /telemetry.tracerProvider: it has no getTracer\(\) method/,
    ],
  ])('fails bootstrap with InvalidLockOptionsError for %s', async (_what, options, message) => {
    const failure = createLockApp({}, { namespace, ...(options as object) });
    await expect(failure).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(failure).rejects.toThrow(message);
  });

  it('fails bootstrap with InvalidLockOptionsError for a template that cannot be one', async () => {
    await expect(
      createLockApp({}, { namespace, telemetry: { pathTemplates: ['orders/<id>'] } }),
    ).rejects.toThrow(/Invalid lock options for telemetry.pathTemplates: "orders\/<id>"/);
  });
});

/** Two methods whose templates match the same concrete paths ('/bills/bill:42'). */
@Injectable()
class Bills {
  @DistributedLock('/bills/bill:<id>')
  async pay(id: string, gate?: Gate) {
    await gate?.opened;
    return id;
  }

  @DistributedLock('/bills/bill:<0.billId>')
  async refund(bill: { billId: string }, gate?: Gate) {
    await gate?.opened;
    return bill.billId;
  }
}

describe('telemetry labels of decorated calls', () => {
  const otel = new TestTelemetry();
  const fixture = useLockApp(
    { providers: [Bills] },
    {
      namespace: testNamespace('telemetry-labels'),
      telemetry: { meterProvider: otel.meterProvider },
    },
  );
  const bills = () => fixture.app.get(Bills);
  afterAll(() => otel.shutdown());

  it('labels each call by its own template, not by another matching the same path', async () => {
    await bills().pay('42');
    await bills().pay('43');
    await bills().refund({ billId: '42' });
    expect(await otel.value('zk_lock.acquired', path('/bills/bill:<id>'))).toBe(2);
    expect(await otel.value('zk_lock.acquired', path('/bills/bill:<0.billId>'))).toBe(1);
    await waitFor(
      async () =>
        (await otel.value('zk_lock.hold.duration', path('/bills/bill:<id>'))) === 2 &&
        (await otel.value('zk_lock.hold.duration', path('/bills/bill:<0.billId>'))) === 1,
      'the hold times, each under its own template',
    );
  });

  it('counts holders under the template of the call that holds', async () => {
    const gate = new Gate();
    const holding = bills().refund({ billId: '44' }, gate);
    const holders = (template: string) => otel.value('zk_lock.holders', path(template));
    await waitFor(async () => (await holders('/bills/bill:<0.billId>')) === 1, 'one refund holder');
    expect(await holders('/bills/bill:<id>')).toBe(0);
    gate.open();
    await holding;
    await waitFor(async () => (await holders('/bills/bill:<0.billId>')) === 0, 'no holder after');
  });
});
