import { Logger } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
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
    fence BIGINT NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS orders (
    id BIGSERIAL PRIMARY KEY,
    product_id TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    status TEXT NOT NULL DEFAULT 'live',
    fence BIGINT NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS orders_by_product ON orders (product_id, status);
`;

/** Any lock id for pg_advisory_lock: instances starting together migrate one at a time. */
const MIGRATION_LOCK = 4_242_001;

/**
 * PostgreSQL (READ COMMITTED): the fenced `UPDATE ... WHERE fence = $t` re-checks the newest row
 * version, so a write from a holder whose token was overtaken changes nothing.
 */
export class PostgresInventoryStore extends InventoryStore {
  private readonly pool: Pool;
  private readonly logger = new Logger(PostgresInventoryStore.name);

  constructor(connectionString: string) {
    super();
    this.pool = new Pool({ connectionString, max: 10 });
    // An idle connection that breaks (server restart) is dropped by the pool; without a
    // listener its 'error' event would crash the process.
    this.pool.on('error', (err) =>
      this.logger.warn(`Idle PostgreSQL connection dropped: ${err.message}`),
    );
  }

  async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await client.query(SCHEMA);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async setProduct(id: string, stock: number, token: FencingToken): Promise<'written' | 'stale'> {
    return this.transaction(async (client) => {
      const { rowCount } = await client.query(
        `INSERT INTO products (id, stock, fence) VALUES ($1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET stock = excluded.stock, fence = excluded.fence
         WHERE products.fence < excluded.fence`,
        [id, stock, token.toString()],
      );
      if (rowCount === 0) return 'stale';
      await client.query('DELETE FROM orders WHERE product_id = $1', [id]);
      return 'written';
    });
  }

  async getProduct(id: string): Promise<ProductView | null> {
    const { rows } = await this.pool.query(
      `SELECT p.id, p.stock,
         (SELECT COALESCE(SUM(quantity), 0) FROM orders o
           WHERE o.product_id = p.id AND o.status = 'live') AS sold
       FROM products p WHERE p.id = $1`,
      [id],
    );
    return rows[0] ? { id: rows[0].id, stock: rows[0].stock, sold: Number(rows[0].sold) } : null;
  }

  async claimProduct(id: string, token: FencingToken): Promise<ClaimResult> {
    return this.claim('products', id, token);
  }

  async readStock(id: string): Promise<number | null> {
    const { rows } = await this.pool.query('SELECT stock FROM products WHERE id = $1', [id]);
    return rows[0] ? rows[0].stock : null;
  }

  async placeOrder(write: PlaceOrderWrite): Promise<number | null> {
    return this.transaction(async (client) => {
      const fenced = write.token !== null;
      const params = [write.newStock, write.productId, ...(fenced ? [String(write.token)] : [])];
      const { rowCount } = await client.query(
        `UPDATE products SET stock = $1 WHERE id = $2${fenced ? ' AND fence = $3' : ''}`,
        params,
      );
      if (rowCount === 0) return null;
      const { rows } = await client.query(
        'INSERT INTO orders (product_id, quantity) VALUES ($1, $2) RETURNING id',
        [write.productId, write.quantity],
      );
      return Number(rows[0].id);
    });
  }

  async claimOrder(id: number, token: FencingToken): Promise<ClaimResult> {
    return this.claim('orders', id, token);
  }

  async getOrder(id: number): Promise<OrderRecord | null> {
    const { rows } = await this.pool.query(
      'SELECT id, product_id, quantity, status FROM orders WHERE id = $1',
      [id],
    );
    const row = rows[0];
    return row
      ? {
          id: Number(row.id),
          productId: row.product_id,
          quantity: row.quantity,
          status: row.status,
        }
      : null;
  }

  async cancelOrder(write: CancelWrite): Promise<boolean> {
    return this.transaction(async (client) => {
      const order = await client.query(
        `UPDATE orders SET status = 'cancelled' WHERE id = $1 AND fence = $2`,
        [write.orderId, write.orderToken.toString()],
      );
      const product = await client.query(
        'UPDATE products SET stock = $1 WHERE id = $2 AND fence = $3',
        [write.newStock, write.productId, write.productToken.toString()],
      );
      if (order.rowCount === 1 && product.rowCount === 1) return true;
      throw new StaleWrite();
    }).catch((err) => {
      if (err instanceof StaleWrite) return false; // rolled back
      throw err;
    });
  }

  private async claim(
    table: 'products' | 'orders',
    id: string | number,
    token: FencingToken,
  ): Promise<ClaimResult> {
    const { rowCount } = await this.pool.query(
      `UPDATE ${table} SET fence = $1 WHERE id = $2 AND fence < $1`,
      [token.toString(), id],
    );
    if (rowCount === 1) return 'claimed';
    const { rows } = await this.pool.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id]);
    return rows.length ? 'stale' : 'missing';
  }

  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

class StaleWrite extends Error {}
