/**
 * Claim-then-write (DESIGN.md §2) in both store adapters, against a real SQLite file and a real
 * PostgreSQL: a holder whose token was overtaken writes nothing, even after it read the row.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InventoryStore } from '../../sample-app/src/store/inventory.store';
import { PostgresInventoryStore } from '../../sample-app/src/store/postgres-inventory.store';
import { SqliteInventoryStore } from '../../sample-app/src/store/sqlite-inventory.store';
import { postgresFromEnv, PostgresServer } from '../support/postgres';

const suffix = randomBytes(4).toString('hex');
let dir: string;
let pgServer: PostgresServer | undefined;
const stores: Record<string, InventoryStore> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'inventory-store-'));
  const pg = await postgresFromEnv();
  pgServer = pg.server;
  stores.sqlite = new SqliteInventoryStore(join(dir, 'store.sqlite'));
  stores.postgres = new PostgresInventoryStore(pg.connectionString);
  await Promise.all(Object.values(stores).map((s) => s.migrate()));
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(stores).map((s) => s.close()));
  await pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['sqlite', 'postgres'])('%s store', (kind) => {
  const store = () => stores[kind];
  const id = (name: string) => `${name}-${suffix}`;

  it('creates a product, sells under a claimed token and counts live orders as sold', async () => {
    const p = id('basic');
    expect(await store().setProduct(p, 10, 100n)).toBe('written');
    expect(await store().claimProduct(p, 101n)).toBe('claimed');
    const orderId = await store().placeOrder({
      productId: p,
      quantity: 3,
      newStock: 7,
      token: 101n,
    });
    expect(orderId).toEqual(expect.any(Number));
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 7, sold: 3 });
    expect(await store().getOrder(orderId!)).toEqual({
      id: orderId,
      productId: p,
      quantity: 3,
      status: 'live',
    });
  });

  it('refuses the write of a holder whose token was overtaken after its read', async () => {
    const p = id('fenced');
    await store().setProduct(p, 10, 200n);
    expect(await store().claimProduct(p, 201n)).toBe('claimed'); // old holder claims, reads 10
    expect(await store().claimProduct(p, 202n)).toBe('claimed'); // new holder after expiry
    expect(
      await store().placeOrder({ productId: p, quantity: 10, newStock: 0, token: 202n }),
    ).not.toBeNull();
    expect(
      await store().placeOrder({ productId: p, quantity: 1, newStock: 9, token: 201n }),
    ).toBeNull();
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 0, sold: 10 });
  });

  it('refuses a claim with an older or equal token, and tells a missing row apart', async () => {
    const p = id('claims');
    await store().setProduct(p, 1, 300n);
    expect(await store().claimProduct(p, 300n)).toBe('stale');
    expect(await store().claimProduct(p, 299n)).toBe('stale');
    expect(await store().setProduct(p, 5, 299n)).toBe('stale');
    expect(await store().claimProduct(id('nothing'), 1n)).toBe('missing');
  });

  it('writes without a fence on the unsafe path, so a stale read overwrites newer stock', async () => {
    const p = id('unsafe');
    await store().setProduct(p, 10, 400n);
    await store().placeOrder({ productId: p, quantity: 1, newStock: 9, token: null });
    await store().placeOrder({ productId: p, quantity: 1, newStock: 9, token: null }); // read 10 too
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 9, sold: 2 });
  });

  it('cancels and restocks in one transaction, or not at all when either token is stale', async () => {
    const p = id('cancel');
    await store().setProduct(p, 5, 500n);
    await store().claimProduct(p, 501n);
    const orderId = (await store().placeOrder({
      productId: p,
      quantity: 2,
      newStock: 3,
      token: 501n,
    }))!;
    expect(await store().claimOrder(orderId, 600n)).toBe('claimed');
    expect(await store().claimProduct(p, 502n)).toBe('claimed');
    const stale = { orderId, orderToken: 599n, productId: p, newStock: 5, productToken: 502n };
    expect(await store().cancelOrder(stale)).toBe(false);
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 3, sold: 2 });
    expect(await store().cancelOrder({ ...stale, orderToken: 600n })).toBe(true);
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 5, sold: 0 });
    expect((await store().getOrder(orderId))?.status).toBe('cancelled');
  });

  it('resets a product: new stock, its orders deleted', async () => {
    const p = id('reset');
    await store().setProduct(p, 5, 700n);
    await store().placeOrder({ productId: p, quantity: 2, newStock: 3, token: null });
    expect(await store().setProduct(p, 50, 701n)).toBe('written');
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 50, sold: 0 });
  });
});
