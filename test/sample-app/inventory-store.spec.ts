/**
 * Claim-then-write (docs/design.md "Fencing tokens") in both store adapters, against a real SQLite
 * file and a real PostgreSQL: a holder whose token was overtaken writes nothing, even after it read
 * the row. Tokens go up to 2^128 - 1, so they are also tested past what a 64-bit column holds.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { InventoryStore } from '../../sample-app/src/store/inventory.store';
import { PostgresInventoryStore } from '../../sample-app/src/store/postgres-inventory.store';
import { SqliteInventoryStore } from '../../sample-app/src/store/sqlite-inventory.store';
import { postgresFromEnv, PostgresServer } from '../support/postgres';
import { scaled } from '../support/time-scale';

const suffix = randomBytes(4).toString('hex');
let dir: string;
let pgServer: PostgresServer | undefined;
let pgUrl: string;
const stores: Record<string, InventoryStore> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'inventory-store-'));
  const pg = await postgresFromEnv();
  pgServer = pg.server;
  pgUrl = pg.connectionString;
  stores.sqlite = new SqliteInventoryStore(join(dir, 'store.sqlite'));
  stores.postgres = new PostgresInventoryStore(pgUrl);
  await Promise.all(Object.values(stores).map((s) => s.migrate()));
}, scaled(60_000));

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

  it('claims, orders and writes tokens above 2^64, up to 2^128 - 1', async () => {
    const p = id('wide');
    const token = (5n << 96n) | 7n;
    const next = token + (1n << 32n); // the next lock node: its sequence is one higher
    const last = (1n << 128n) - 1n;
    expect(await store().setProduct(p, 10, token)).toBe('written');
    expect(await store().claimProduct(p, token)).toBe('stale');
    expect(await store().claimProduct(p, token - 1n)).toBe('stale');
    expect(await store().claimProduct(p, 1n << 63n)).toBe('stale'); // fewer digits, not bigger
    expect(await store().claimProduct(p, next)).toBe('claimed');
    // The overtaken holder's write:
    expect(await store().placeOrder({ productId: p, quantity: 1, newStock: 9, token })).toBeNull();
    const orderId = await store().placeOrder({
      productId: p,
      quantity: 4,
      newStock: 6,
      token: next,
    });
    expect(orderId).toEqual(expect.any(Number));
    expect(await store().claimProduct(p, last)).toBe('claimed');
    expect(
      await store().placeOrder({ productId: p, quantity: 1, newStock: 5, token: next }),
    ).toBeNull();
    expect(await store().claimOrder(orderId!, token)).toBe('claimed');
    expect(await store().claimOrder(orderId!, 1n << 64n)).toBe('stale');
    const cancel = { orderId: orderId!, orderToken: token, productId: p, newStock: 10 };
    expect(await store().cancelOrder({ ...cancel, productToken: next })).toBe(false);
    expect(await store().cancelOrder({ ...cancel, productToken: last })).toBe(true);
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 10, sold: 0 });
    expect(await store().setProduct(p, 1, last)).toBe('stale');
  });

  it('refuses a token outside [0, 2^128) instead of storing it wrong', async () => {
    const p = id('range');
    await store().setProduct(p, 1, 1n);
    await expect(store().claimProduct(p, 1n << 128n)).rejects.toThrow(RangeError);
    await expect(store().claimProduct(p, -1n)).rejects.toThrow(RangeError);
    expect(await store().claimProduct(p, 2n)).toBe('claimed');
  });

  it('resets a product: new stock, its orders deleted', async () => {
    const p = id('reset');
    await store().setProduct(p, 5, 700n);
    await store().placeOrder({ productId: p, quantity: 2, newStock: 3, token: null });
    expect(await store().setProduct(p, 50, 701n)).toBe('written');
    expect(await store().getProduct(p)).toEqual({ id: p, stock: 50, sold: 0 });
  });
});

/** The schema before tokens outgrew 64 bits: INTEGER (SQLite) or BIGINT (PostgreSQL) fences. */
const oldSchema = (fenceType: string, orderId: string) => `
  CREATE TABLE products (id TEXT PRIMARY KEY, stock INTEGER NOT NULL,
    fence ${fenceType} NOT NULL DEFAULT 0);
  CREATE TABLE orders (id ${orderId} PRIMARY KEY, product_id TEXT NOT NULL,
    quantity INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'live',
    fence ${fenceType} NOT NULL DEFAULT 0);
  INSERT INTO products (id, stock, fence) VALUES ('apple', 3, 42);
`;

describe('a database made before 128-bit tokens', () => {
  it('SQLite: refuses the old INTEGER fence and says to delete the demo file', async () => {
    const file = join(dir, 'old.sqlite');
    const db = new Database(file);
    db.exec(oldSchema('INTEGER', 'INTEGER'));
    db.close();
    const store = new SqliteInventoryStore(file);
    try {
      await expect(store.migrate()).rejects.toThrow(
        /old\.sqlite" has an old schema: products\.fence is INTEGER.*delete the file/s,
      );
    } finally {
      await store.close();
    }
  });

  it('PostgreSQL: widens the old BIGINT fence to NUMERIC in place, keeping the rows', async () => {
    const schema = `old_fences_${suffix}`;
    const admin = new Client({ connectionString: pgUrl });
    await admin.connect();
    const url = new URL(pgUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const store = new PostgresInventoryStore(url.toString());
    try {
      await admin.query(`CREATE SCHEMA ${schema}; SET search_path = ${schema};`);
      await admin.query(oldSchema('BIGINT', 'BIGSERIAL'));
      await store.migrate();
      const { rows } = await admin.query(
        `SELECT table_name, data_type, numeric_precision FROM information_schema.columns
         WHERE table_schema = $1 AND column_name = 'fence' ORDER BY table_name`,
        [schema],
      );
      expect(rows).toEqual([
        { table_name: 'orders', data_type: 'numeric', numeric_precision: 39 },
        { table_name: 'products', data_type: 'numeric', numeric_precision: 39 },
      ]);
      expect(await store.claimProduct('apple', 42n)).toBe('stale');
      expect(await store.claimProduct('apple', (5n << 96n) | 7n)).toBe('claimed');
      expect(await store.getProduct('apple')).toEqual({ id: 'apple', stock: 3, sold: 0 });
    } finally {
      await store.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });
});
