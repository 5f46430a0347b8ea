import {
  CancelWrite,
  ClaimResult,
  FencingToken,
  InventoryStore,
  OrderRecord,
  PlaceOrderWrite,
  ProductView,
} from './inventory.store';

/** What a statement returned: its rows (SELECT, RETURNING) and how many rows it changed. */
export interface SqlResult {
  rows: Record<string, unknown>[];
  changes: number;
}

/** One statement of an all-or-nothing write; if a `mustChange` one changes no row, all undo. */
export interface WriteStep {
  sql: string;
  params: unknown[];
  mustChange?: boolean;
}

/**
 * The inventory's SQL, written once for both adapters: statements use `?` placeholders, each
 * bound once, and every token is bound as `encodeFence(token)` (the adapter's column format).
 * An adapter supplies the connection: one statement, and an all-or-nothing list of statements.
 */
export abstract class SqlInventoryStore extends InventoryStore {
  /** The token as the adapter's fence column stores and compares it. */
  protected abstract encodeFence(token: FencingToken): string;
  protected abstract query(sql: string, params: unknown[]): Promise<SqlResult>;
  /**
   * Runs the steps in one transaction and returns their results; when a `mustChange` step
   * changes no row (a newer token owns it), rolls back and returns null.
   */
  protected abstract writeAll(steps: WriteStep[]): Promise<SqlResult[] | null>;

  async setProduct(id: string, stock: number, token: FencingToken): Promise<'written' | 'stale'> {
    const done = await this.writeAll([
      {
        sql: `INSERT INTO products (id, stock, fence) VALUES (?, ?, ?)
              ON CONFLICT (id) DO UPDATE SET stock = excluded.stock, fence = excluded.fence
              WHERE products.fence < excluded.fence`,
        params: [id, stock, this.encodeFence(token)],
        mustChange: true,
      },
      { sql: 'DELETE FROM orders WHERE product_id = ?', params: [id] },
    ]);
    return done ? 'written' : 'stale';
  }

  async getProduct(id: string): Promise<ProductView | null> {
    const { rows } = await this.query(
      `SELECT p.id, p.stock,
         (SELECT COALESCE(SUM(quantity), 0) FROM orders o
           WHERE o.product_id = p.id AND o.status = 'live') AS sold
       FROM products p WHERE p.id = ?`,
      [id],
    );
    const row = rows[0];
    return row ? { id: String(row.id), stock: Number(row.stock), sold: Number(row.sold) } : null;
  }

  async claimProduct(id: string, token: FencingToken): Promise<ClaimResult> {
    return this.claim('products', id, token);
  }

  async readStock(id: string): Promise<number | null> {
    const { rows } = await this.query('SELECT stock FROM products WHERE id = ?', [id]);
    return rows[0] ? Number(rows[0].stock) : null;
  }

  async placeOrder(write: PlaceOrderWrite): Promise<number | null> {
    return (await this.placeOrders([write]))?.[0] ?? null;
  }

  async placeOrders(writes: readonly PlaceOrderWrite[]): Promise<number[] | null> {
    const done = await this.writeAll(writes.flatMap((write) => this.orderSteps(write)));
    // Each write is an UPDATE then an INSERT ... RETURNING id.
    return done ? writes.map((_, i) => Number(done[2 * i + 1].rows[0].id)) : null;
  }

  private orderSteps(write: PlaceOrderWrite): WriteStep[] {
    const fence = write.token === null ? [] : [this.encodeFence(write.token)];
    return [
      {
        sql: `UPDATE products SET stock = ? WHERE id = ?${fence.length ? ' AND fence = ?' : ''}`,
        params: [write.newStock, write.productId, ...fence],
        mustChange: true, // a stale token, or (unfenced) a missing product
      },
      {
        sql: 'INSERT INTO orders (product_id, quantity) VALUES (?, ?) RETURNING id',
        params: [write.productId, write.quantity],
      },
    ];
  }

  async claimOrder(id: number, token: FencingToken): Promise<ClaimResult> {
    return this.claim('orders', id, token);
  }

  async getOrder(id: number): Promise<OrderRecord | null> {
    const { rows } = await this.query(
      'SELECT id, product_id, quantity, status FROM orders WHERE id = ?',
      [id],
    );
    const row = rows[0];
    return row
      ? {
          id: Number(row.id),
          productId: String(row.product_id),
          quantity: Number(row.quantity),
          status: row.status as OrderRecord['status'],
        }
      : null;
  }

  async cancelOrder(write: CancelWrite): Promise<boolean> {
    const done = await this.writeAll([
      {
        sql: `UPDATE orders SET status = 'cancelled' WHERE id = ? AND fence = ?`,
        params: [write.orderId, this.encodeFence(write.orderToken)],
        mustChange: true,
      },
      {
        sql: 'UPDATE products SET stock = ? WHERE id = ? AND fence = ?',
        params: [write.newStock, write.productId, this.encodeFence(write.productToken)],
        mustChange: true,
      },
    ]);
    return done !== null;
  }

  private async claim(
    table: 'products' | 'orders',
    id: string | number,
    token: FencingToken,
  ): Promise<ClaimResult> {
    const fence = this.encodeFence(token);
    const { changes } = await this.query(
      `UPDATE ${table} SET fence = ? WHERE id = ? AND fence < ?`,
      [fence, id, fence],
    );
    if (changes === 1) return 'claimed';
    const { rows } = await this.query(`SELECT 1 FROM ${table} WHERE id = ?`, [id]);
    return rows.length ? 'stale' : 'missing';
  }
}
