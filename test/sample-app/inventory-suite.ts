/**
 * The e2e suite both stores must pass: three sample-app processes, a real ZooKeeper (the test
 * global setup's), and a shared SQLite file or a real PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DemoStack, StoreKind } from '../../scripts/demo/demo-stack';
import { HttpJson } from '../../scripts/demo/http-json';
import { runOversell } from '../../scripts/demo/oversell-run';
import { runPausedHolder } from '../../scripts/demo/paused-holder';
import { scaled } from '../support/time-scale';

const SESSION_TIMEOUT_MS = 2000;

export function describeInventory(store: StoreKind): void {
  const suffix = randomBytes(4).toString('hex');
  const namespace = `/test-inventory-${store}-${suffix}`;
  const product = (name: string) => `${name}-${suffix}`;
  let dir: string;
  let http: HttpJson;
  let stack: DemoStack;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `inventory-${store}-`));
    http = new HttpJson();
    stack = await DemoStack.start({
      dir,
      store,
      postgresUrl: process.env.PG_URL,
      zkConnect: process.env.ZK_CONNECT,
      env: {
        STOCK_IO_DELAY_MS: '20',
        ZK_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
        ZK_NAMESPACE: namespace,
        LOCK_WAIT_TIMEOUT_MS: '120000',
      },
    });
  }, scaled(180_000));

  afterAll(async () => {
    http?.close();
    await stack?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, scaled(60_000));

  it('runs three instances as separate processes sharing one store', async () => {
    const [a, b, c] = stack.instances;
    expect(new Set([a.pid, b.pid, c.pid, process.pid]).size).toBe(4);
    const id = product('shared');
    expect((await http.put(`${a.url}/products/${id}`, { stock: 7 })).status).toBe(200);
    for (const instance of [b, c]) {
      expect(await http.get(`${instance.url}/products/${id}`)).toEqual({
        status: 200,
        body: { id, stock: 7, sold: 0 },
      });
    }
  });

  it(
    'oversells on /orders/unsafe under 1,000 concurrent orders',
    async () => {
      const run = await runOversell({
        name: 'unsafe',
        http,
        urls: stack.urls,
        endpoint: '/orders/unsafe',
        productId: product('unsafe'),
        stock: 100,
        orders: 1000,
      });
      expect(run.failed).toBe(0);
      expect(run.sold).toBe(run.accepted);
      expect(run.sold).toBeGreaterThan(100);
      expect(run.oversold).toBeGreaterThan(0);
    },
    scaled(120_000),
  );

  it(
    'sells exactly the stock on /orders under 1,000 concurrent orders',
    async () => {
      const run = await runOversell({
        name: 'locked',
        http,
        urls: stack.urls,
        endpoint: '/orders',
        productId: product('locked'),
        stock: 100,
        orders: 1000,
      });
      expect(run.failures).toEqual({});
      expect(run).toMatchObject({
        accepted: 100,
        rejected: 900,
        finalStock: 0,
        sold: 100,
        oversold: 0,
      });
    },
    scaled(180_000),
  );

  it(
    'multi-item orders naming the same products in opposite orders: no oversell, no deadlock, all answered',
    async () => {
      const ids = ['x', 'y', 'z'].map((n) => product(`multi-${n}`));
      const [a] = stack.urls;
      for (const id of ids)
        expect((await http.put(`${a}/products/${id}`, { stock: 20 })).status).toBe(200);
      // 90 orders of 2 or 3 products each, in rotating and reversed orders, over the 3 instances.
      const orders = Array.from({ length: 90 }, (_, i) => {
        const names = [ids[i % 3], ids[(i + 1) % 3], ids[(i + 2) % 3]].slice(0, 2 + (i % 2));
        return i % 4 < 2 ? names : names.reverse();
      });
      const answers = await Promise.all(
        orders.map((names, i) =>
          http.post(`${stack.urls[i % 3]}/orders`, {
            items: names.map((productId) => ({ productId, quantity: 1 })),
          }),
        ),
      );
      const statuses = answers.map((r) => (r.status === 409 ? r.body.error : r.status));
      expect(statuses.filter((s) => s !== 201 && s !== 'OUT_OF_STOCK')).toEqual([]);
      const accepted = orders.filter((_, i) => answers[i].status === 201);
      expect(accepted.length).toBeGreaterThan(0);
      for (const id of ids) {
        const view = (await http.get(`${a}/products/${id}`)).body;
        const soldByAnswers = accepted.filter((names) => names.includes(id)).length;
        expect(view).toEqual({ id, stock: 20 - soldByAnswers, sold: soldByAnswers });
        expect(view.stock).toBeGreaterThanOrEqual(0); // never oversold
      }
    },
    scaled(120_000),
  );

  it(
    'puts the quantity back exactly once when 30 cancels of one order arrive at once',
    async () => {
      const id = product('cancel');
      const [a] = stack.urls;
      expect((await http.put(`${a}/products/${id}`, { stock: 5 })).status).toBe(200);
      const placed = await http.post(`${a}/orders`, { productId: id, quantity: 3 });
      expect(placed.status).toBe(201);
      const { orderId } = placed.body;
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          http.post(`${stack.urls[i % 3]}/orders/${orderId}/cancel`, {}),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(30).fill(200));
      expect(answers.filter((r) => r.body.restocked === true)).toHaveLength(1);
      expect((await http.get(`${a}/products/${id}`)).body).toEqual({ id, stock: 5, sold: 0 });
    },
    scaled(60_000),
  );

  it(
    'answers invalid input with 400/404 and a message, never 500',
    async () => {
      const url = stack.urls[1];
      const id = product('valid');
      await http.put(`${url}/products/${id}`, { stock: 1 });
      const cases: [string, string, unknown, number, string][] = [
        ['POST', '/orders', { quantity: 1 }, 400, 'INVALID_PRODUCT_ID'],
        ['POST', '/orders', { productId: id }, 400, 'INVALID_ORDER'],
        ['POST', '/orders', { productId: id, quantity: 0 }, 400, 'INVALID_ORDER'],
        ['POST', '/orders', { productId: id, quantity: -2 }, 400, 'INVALID_ORDER'],
        ['POST', '/orders', { productId: id, quantity: 1.5 }, 400, 'INVALID_ORDER'],
        ['POST', '/orders', { productId: id, quantity: '1' }, 400, 'INVALID_ORDER'],
        ['POST', '/orders', { productId: '../admin', quantity: 1 }, 400, 'INVALID_PRODUCT_ID'],
        ['POST', '/orders', { productId: { $ne: 1 }, quantity: 1 }, 400, 'INVALID_PRODUCT_ID'],
        ['POST', '/orders', [1, 2], 400, 'INVALID_ORDER'],
        [
          'POST',
          '/orders',
          { productId: product('missing'), quantity: 1 },
          404,
          'PRODUCT_NOT_FOUND',
        ],
        ['POST', '/orders/unsafe', { productId: id, quantity: 0 }, 400, 'INVALID_ORDER'],
        [
          'POST',
          '/orders/unsafe',
          { productId: product('missing'), quantity: 1 },
          404,
          'PRODUCT_NOT_FOUND',
        ],
        ['POST', '/orders/abc/cancel', {}, 400, 'INVALID_ORDER_ID'],
        ['POST', '/orders/999999999/cancel', {}, 404, 'ORDER_NOT_FOUND'],
        ['PUT', `/products/${id}`, { stock: -1 }, 400, 'INVALID_STOCK'],
        ['PUT', `/products/${id}`, {}, 400, 'INVALID_STOCK'],
        ['GET', `/products/${product('missing')}`, undefined, 404, 'PRODUCT_NOT_FOUND'],
        ['POST', '/orders', { productId: id, quantity: 2 }, 409, 'OUT_OF_STOCK'],
      ];
      for (const [method, path, body, status, error] of cases) {
        const res = await http.send(method, `${url}${path}`, body);
        expect({
          call: `${method} ${path} ${JSON.stringify(body)}`,
          status: res.status,
          error: res.body.error,
        }).toEqual({ call: `${method} ${path} ${JSON.stringify(body)}`, status, error });
        expect(res.body.message).toEqual(expect.any(String));
      }
    },
    scaled(60_000),
  );

  it('answers a malformed JSON body with 400', async () => {
    const res = await rawPost(`${stack.urls[2]}/orders`, '{"productId": ');
    expect(res).toBe(400);
  });

  it(
    'refuses the write of a holder frozen past its session timeout: nothing oversold',
    async () => {
      const result = await runPausedHolder({
        stack,
        http,
        productId: product('paused'),
        stock: 10,
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        namespace,
      });
      expect(result).toMatchObject({
        othersAccepted: 10,
        pausedHolderAnswer: { status: 409, error: 'STALE_FENCING_TOKEN' },
        fencedWriteRejected: true,
        finalStock: 0,
        sold: 10,
        oversold: 0,
      });
    },
    scaled(120_000),
  );
}

async function rawPost(url: string, text: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    body: text,
    headers: { 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  return res.status;
}
