/**
 * The storage port of the sample app. Two adapters implement it (SQLite, PostgreSQL) on shared
 * SQL (sql-inventory.store.ts); both must pass the same e2e tests.
 *
 * Fencing (docs/design.md "Fencing tokens", claim-then-write): a lock holder first *claims* a row
 * with its fencing token (`fence = :t WHERE fence < :t`), then reads, then writes
 * `WHERE fence = :t`. A holder that was paused past its session timeout finds a newer token in
 * the row and writes nothing.
 */

/**
 * A lock's fencing token: any bigint in [0, 2^128), e.g. `(czxid << 64) | (sequence << 32) |
 * generation`; on an ensemble even a czxid passes 2^32. Stores keep it in columns that hold 39
 * digits and compare numerically (fence-column.ts), never in a 64-bit integer.
 */
export type FencingToken = bigint;

export interface ProductView {
  id: string;
  stock: number;
  /** Sum of the quantities of the product's live (not cancelled) orders. */
  sold: number;
}

export interface OrderRecord {
  id: number;
  productId: string;
  quantity: number;
  status: 'live' | 'cancelled';
}

/** claimed: the row now carries our token; stale: a newer token is there; missing: no such row. */
export type ClaimResult = 'claimed' | 'stale' | 'missing';

export interface PlaceOrderWrite {
  productId: string;
  quantity: number;
  /** The stock computed from the read: `read - quantity` (a read-modify-write, on purpose). */
  newStock: number;
  /** The product lock's token, or null for the unfenced (unsafe) write. */
  token: FencingToken | null;
}

export interface CancelWrite {
  orderId: number;
  orderToken: FencingToken;
  productId: string;
  newStock: number;
  productToken: FencingToken;
}

export abstract class InventoryStore {
  /** Creates the tables when missing; safe when several instances start at once. */
  abstract migrate(): Promise<void>;
  abstract close(): Promise<void>;
  /** Sets the stock and deletes the product's orders, unless a newer token owns the row. */
  abstract setProduct(id: string, stock: number, token: FencingToken): Promise<'written' | 'stale'>;
  abstract getProduct(id: string): Promise<ProductView | null>;
  abstract claimProduct(id: string, token: FencingToken): Promise<ClaimResult>;
  abstract readStock(id: string): Promise<number | null>;
  /** Writes the new stock and records the order; null when the fence rejected the write. */
  abstract placeOrder(write: PlaceOrderWrite): Promise<number | null>;
  /**
   * placeOrder for several products in one transaction (all or nothing): one order row per
   * write, ids in the same order; null when any fence rejected its write (nothing is written).
   */
  abstract placeOrders(writes: readonly PlaceOrderWrite[]): Promise<number[] | null>;
  abstract claimOrder(id: number, token: FencingToken): Promise<ClaimResult>;
  abstract getOrder(id: number): Promise<OrderRecord | null>;
  /** Marks the order cancelled and restocks, both fenced, in one transaction; false when stale. */
  abstract cancelOrder(write: CancelWrite): Promise<boolean>;
}
