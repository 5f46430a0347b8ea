/**
 * `@DistributedLock` on microservice handlers (`@MessagePattern`, `@EventPattern`,
 * TCP transport), three instances in their own processes contending on one product. Templates
 * read the `@Payload()`; lock errors reach the client as `{ code, status, message }`.
 */
import { ClientProxy, ClientProxyFactory, Transport } from '@nestjs/microservices';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { scaled } from '../support/time-scale';
import { freePort } from '../support/zookeeper';
import { AppProcess } from './support/app-process';
import { testNamespace, waitFor, zkConnect } from './support/nest-app';

const ORDERS = 60;

describe('@DistributedLock on a TCP microservice, 3 instances', () => {
  const namespace = testNamespace('microservices');
  const dir = mkdtempSync(join(tmpdir(), 'nest-rpc-'));
  const apps: AppProcess[] = [];
  const clients: ClientProxy[] = [];

  beforeAll(async () => {
    const ports = [await freePort(), await freePort(), await freePort()];
    const started = await Promise.all(
      ports.map((port) =>
        AppProcess.start(
          { ZK_CONNECT: zkConnect(), NAMESPACE: namespace, DIR: dir, PORT: String(port) },
          'rpc.app.ts',
        ),
      ),
    );
    apps.push(...started);
    for (const port of ports) {
      const client = ClientProxyFactory.create({
        transport: Transport.TCP,
        options: { host: '127.0.0.1', port },
      });
      await client.connect();
      clients.push(client);
    }
  });

  afterAll(async () => {
    clients.forEach((c) => c.close());
    await Promise.all(apps.map((app) => app.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const counter = (file: string): number =>
    existsSync(join(dir, file)) ? Number(readFileSync(join(dir, file), 'utf8')) : 0;

  /** Intervals of one counter's sections that overlap (any process). */
  const overlaps = (file: string): number => {
    const sections = readFileSync(join(dir, `${file}.log`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ').map((n, i) => (i < 2 ? BigInt(n) : 0n)))
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    let count = 0;
    let end = -1n;
    for (const [s, e] of sections) {
      if (s < end) count++;
      if (e > end) end = e;
    }
    return count;
  };

  const send = (i: number, pattern: string, data: object) =>
    firstValueFrom(clients[i % 3].send(pattern, data));

  it('serializes @MessagePattern calls on one product across instances: no lost update, no overlap', async () => {
    const answers = await Promise.all(
      Array.from({ length: ORDERS }, (_, i) =>
        send(i, 'deduct', { productId: 'apple', orderId: i }),
      ),
    );
    expect(counter('deduct-apple')).toBe(ORDERS);
    expect(overlaps('deduct-apple')).toBe(0);
    expect([...answers].sort((a, b) => a - b)).toEqual(
      Array.from({ length: ORDERS }, (_, i) => i + 1),
    );
  });

  it('the same without the lock loses updates: the detector can fail', async () => {
    await Promise.all(
      Array.from({ length: ORDERS }, (_, i) =>
        send(i, 'deduct-unlocked', { productId: 'pear', orderId: i }),
      ),
    );
    expect(counter('unlocked-pear')).toBeLessThan(ORDERS);
    expect(overlaps('unlocked-pear')).toBeGreaterThan(0);
  });

  it('serializes @EventPattern handlers too', async () => {
    for (let i = 0; i < ORDERS; i++)
      clients[i % 3].emit('restocked', { productId: 'plum', orderId: i });
    await waitFor(() => counter('restocked-plum') === ORDERS, 'every event handled');
    expect(overlaps('restocked-plum')).toBe(0);
  });

  it('answers a busy lock with { code: LOCK_TIMEOUT, status: 409 } naming the path', async () => {
    const holding = send(0, 'hold-first', { key: 'k', ms: scaled(5_000) });
    let error: unknown;
    for (let attempt = 0; attempt < 100 && !error; attempt++) {
      // Until the first call holds the lock, the second may get it: try again.
      error = await send(1, 'hold', { key: 'k', ms: 0 }).then(
        () => undefined,
        (err: unknown) => err,
      );
    }
    expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', status: 409, lock: '/held/k' });
    expect(await holding).toBe('held k');
  });

  it('answers the same when a plain handler calls a locked service', async () => {
    const holding = send(0, 'hold-first', { key: 'p', ms: scaled(5_000) });
    let error: unknown;
    for (let attempt = 0; attempt < 100 && !error; attempt++) {
      error = await send(1, 'hold-plain', { key: 'p', ms: 0 }).then(
        () => undefined,
        (err: unknown) => err,
      );
    }
    expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', status: 409, lock: '/held/p' });
    expect(await holding).toBe('held p');
  });
});
