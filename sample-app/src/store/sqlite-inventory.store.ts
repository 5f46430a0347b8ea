import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  CancelWrite,
  ClaimResult,
  FencingToken,
  InventoryStore,
  OrderRecord,
  PlaceOrderWrite,
  ProductView,
} from './inventory.store';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS products (
    id TEXT PRIMARY KEY,
    stock INTEGER NOT NULL CHECK (stock >= 0),
    fence INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    product_id TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    status TEXT NOT NULL DEFAULT 'live',
    fence INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS orders_by_product ON orders (product_id, status);
`;

/**
 * One SQLite file shared by every local instance (WAL mode; writers take the file's write lock
 * with BEGIN IMMEDIATE and wait up to 5 s for it). better-sqlite3 is synchronous: each call is
 * one short statement, the slow part of an order is the awaited payment step between them.
 */
export class SqliteInventoryStore extends InventoryStore {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    super();
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file, { timeout: 5000 });
  }

  async migrate(): Promise<void> {
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.transaction(() => this.db.exec(SCHEMA)).immediate();
  }

  async close(): Promise<void> {
    this.db.close();
  }

  async setProduct(id: string, stock: number, token: FencingToken): Promise<'written' | 'stale'> {
    const write = this.db.transaction(() => {
      const { changes } = this.db
        .prepare(
          `INSERT INTO products (id, stock, fence) VALUES (?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET stock = excluded.stock, fence = excluded.fence
           WHERE products.fence < excluded.fence`,
        )
        .run(id, stock, token);
      if (changes === 0) return 'stale';
      this.db.prepare('DELETE FROM orders WHERE product_id = ?').run(id);
      return 'written';
    });
    return write.immediate();
  }

  async getProduct(id: string): Promise<ProductView | null> {
    const row = this.db
      .prepare(
        `SELECT p.id, p.stock,
           (SELECT COALESCE(SUM(quantity), 0) FROM orders o
             WHERE o.product_id = p.id AND o.status = 'live') AS sold
         FROM products p WHERE p.id = ?`,
      )
      .get(id) as ProductView | undefined;
    return row ?? null;
  }

  async claimProduct(id: string, token: FencingToken): Promise<ClaimResult> {
    return this.claim('products', id, token);
  }

  async readStock(id: string): Promise<number | null> {
    const row = this.db.prepare('SELECT stock FROM products WHERE id = ?').get(id) as
      { stock: number } | undefined;
    return row ? row.stock : null;
  }

  async placeOrder(write: PlaceOrderWrite): Promise<number | null> {
    const run = this.db.transaction((): number | null => {
      const fenced = write.token !== null;
      const { changes } = this.db
        .prepare(`UPDATE products SET stock = ? WHERE id = ?${fenced ? ' AND fence = ?' : ''}`)
        .run(write.newStock, write.productId, ...(fenced ? [write.token] : []));
      if (changes === 0) return null;
      const { lastInsertRowid } = this.db
        .prepare('INSERT INTO orders (product_id, quantity) VALUES (?, ?)')
        .run(write.productId, write.quantity);
      return Number(lastInsertRowid);
    });
    return run.immediate();
  }

  async claimOrder(id: number, token: FencingToken): Promise<ClaimResult> {
    return this.claim('orders', id, token);
  }

  async getOrder(id: number): Promise<OrderRecord | null> {
    const row = this.db
      .prepare('SELECT id, product_id AS productId, quantity, status FROM orders WHERE id = ?')
      .get(id) as OrderRecord | undefined;
    return row ?? null;
  }

  async cancelOrder(write: CancelWrite): Promise<boolean> {
    const run = this.db.transaction((): boolean => {
      const order = this.db
        .prepare(`UPDATE orders SET status = 'cancelled' WHERE id = ? AND fence = ?`)
        .run(write.orderId, write.orderToken);
      const product = this.db
        .prepare('UPDATE products SET stock = ? WHERE id = ? AND fence = ?')
        .run(write.newStock, write.productId, write.productToken);
      if (order.changes === 1 && product.changes === 1) return true;
      throw new StaleWrite();
    });
    try {
      return run.immediate();
    } catch (err) {
      if (err instanceof StaleWrite) return false; // the transaction was rolled back
      throw err;
    }
  }

  private claim(
    table: 'products' | 'orders',
    id: string | number,
    token: FencingToken,
  ): ClaimResult {
    const { changes } = this.db
      .prepare(`UPDATE ${table} SET fence = ? WHERE id = ? AND fence < ?`)
      .run(token, id, token);
    if (changes === 1) return 'claimed';
    const exists = this.db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).get(id);
    return exists ? 'stale' : 'missing';
  }
}

class StaleWrite extends Error {}
