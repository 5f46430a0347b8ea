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

  it("labels a call by its own pathTemplate, and a semaphore's mutex by <pathTemplate>/locks", async () => {
    // Two templates match each path: the best match is the first listed; a call that names the
    // second keeps it, one that names a template not listed gets the best match.
    const [FIRST, SECOND] = [`${zk.root}/pt/<a>`, `${zk.root}/pt/<b>`];
    const [SEM_FIRST, SEM_SECOND] = [`${zk.root}/sem/<a>`, `${zk.root}/sem/<b>`];
    const own = new TestTelemetry();
    const labelled = LockTelemetry.attach(zk.locks, {
      pathTemplates: [FIRST, SECOND, `${SEM_FIRST}/locks`, `${SEM_SECOND}/locks`],
      meterProvider: own.meterProvider,
    });
    const acquired = (label: string) => own.value('zk_lock.acquired', { 'zk_lock.path': label });
    try {
      const path = `${zk.root}/pt/x`;
      await zk.locks.withLock(path, () => undefined, { pathTemplate: SECOND });
      await zk.locks.withLock(path, () => undefined);
      await zk.locks.withLock(path, () => undefined, { pathTemplate: `${zk.root}/other/<x>` });
      const semaphore = zk.locks.semaphore(`${zk.root}/sem/pdf`, { maxLeases: 1 });
      await semaphore.withLease(() => undefined, { pathTemplate: SEM_SECOND });
      await semaphore.withLease(() => undefined);
      expect(await acquired(SECOND)).toBe(1);
      expect(await acquired(FIRST)).toBe(2);
      expect(await acquired(`${SEM_SECOND}/locks`)).toBe(1);
      expect(await acquired(`${SEM_FIRST}/locks`)).toBe(1);
    } finally {
      labelled?.close();
      await own.shutdown();
    }
  });

  it('close() is idempotent and stops measuring', async () => {
    const second = LockTelemetry.attach(zk.locks, { meterProvider: otel.meterProvider });
    second?.close();
    second?.close();
    expect(zk.locks.listenerCount('waited')).toBe(1); // the first one's only
  });
});
