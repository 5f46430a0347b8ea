/**
 * LockTelemetry without NestJS (docs/guides/observability.md), on a real ZooKeeper: the lock family's
 * waits are measured under their templates, and every way a wait ends has its outcome.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { ClientClosedError, LockAbortedError, LockTelemetry, ZkLockClient } from '../../lib/core';
import { TestTelemetry } from '../support/otel';
import { useCoreFixture } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

describe('LockTelemetry on a ZkLockClient', () => {
  const zk = useCoreFixture('telemetry');
  const otel = new TestTelemetry();
  const ACCOUNT = `${zk.root}/acct:<id>`;
  const CONFIG = `${zk.root}/config:<name>`;
  let telemetry: LockTelemetry | undefined;
  const outcome = (label: string, outcome: string) => ({
    'zk_lock.path': label,
    'zk_lock.outcome': outcome,
  });

  beforeAll(() => {
    telemetry = LockTelemetry.attach(zk.locks, {
      pathTemplates: [ACCOUNT, CONFIG],
      meterProvider: otel.meterProvider,
      tracerProvider: otel.tracerProvider,
    });
  });
  afterAll(async () => {
    telemetry?.close();
    await otel.shutdown();
  });

  it('measures both sides of a read/write lock and each member of a multi-path lock', async () => {
    await zk.locks.readLock(`${zk.root}/config:a`).withLock(() => undefined);
    await zk.locks.writeLock(`${zk.root}/config:a`).withLock(() => undefined);
    await zk.locks.withLockAll([`${zk.root}/acct:1`, `${zk.root}/acct:2`], () => undefined);
    expect(await otel.value('zk_lock.acquired', { 'zk_lock.path': CONFIG })).toBe(2);
    expect(await otel.value('zk_lock.acquired', { 'zk_lock.path': ACCOUNT })).toBe(2);
    expect(await otel.value('zk_lock.hold.duration', { 'zk_lock.path': ACCOUNT })).toBe(2);
  });

  it('does not count a re-entry as an acquisition or a wait', async () => {
    const before = await otel.value('zk_lock.acquired', { 'zk_lock.path': ACCOUNT });
    const waitsBefore = await otel.value('zk_lock.wait.duration', outcome(ACCOUNT, 'acquired'));
    await zk.locks.withLock(`${zk.root}/acct:3`, () =>
      zk.locks.withLock(`${zk.root}/acct:3`, () => undefined),
    );
    expect(await otel.value('zk_lock.acquired', { 'zk_lock.path': ACCOUNT })).toBe(before + 1);
    expect(await otel.value('zk_lock.wait.duration', outcome(ACCOUNT, 'acquired'))).toBe(
      waitsBefore + 1,
    );
  });

  it("records an aborted wait as 'aborted', with an ERROR span", async () => {
    otel.spans.reset();
    const path = `${zk.root}/acct:4`;
    const held = await zk.locks.acquire(path);
    const abort = new AbortController();
    const waiting = zk.locks.acquire(path, { signal: abort.signal });
    await eventually(
      'one waiter',
      async () => (await otel.value('zk_lock.waiters', { 'zk_lock.path': ACCOUNT })) === 1,
    );
    abort.abort(new Error('user gave up'));
    await expect(waiting).rejects.toBeInstanceOf(LockAbortedError);
    await held.release();
    expect(await otel.value('zk_lock.wait.duration', outcome(ACCOUNT, 'aborted'))).toBe(1);
    const aborted = otel.spans
      .getFinishedSpans()
      .filter((s) => s.attributes['zk_lock.outcome'] === 'aborted');
    expect(aborted.map((s) => s.status)).toEqual([
      { code: SpanStatusCode.ERROR, message: 'LockAbortedError' },
    ]);
  });

  it("records a wait that the client's close() ended as 'failed'", async () => {
    const other = await ZkLockClient.connect({ connectionString: zkConnectFromEnv() });
    const otherTelemetry = LockTelemetry.attach(other, {
      pathTemplates: [ACCOUNT],
      meterProvider: otel.meterProvider,
    });
    const path = `${zk.root}/acct:5`;
    const held = await zk.locks.acquire(path);
    try {
      const waiting = other.acquire(path);
      waiting.catch(() => undefined);
      await other.close();
      await expect(waiting).rejects.toBeInstanceOf(ClientClosedError);
    } finally {
      otherTelemetry?.close();
      await held.release();
    }
    expect(await otel.value('zk_lock.wait.duration', outcome(ACCOUNT, 'failed'))).toBe(1);
  });

  it('close() is idempotent and stops measuring', async () => {
    const second = LockTelemetry.attach(zk.locks, { meterProvider: otel.meterProvider });
    second?.close();
    second?.close();
    expect(zk.locks.listenerCount('waited')).toBe(1); // the first one's only
  });
});
