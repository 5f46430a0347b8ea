import { Logger } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { fenceDecimal } from './fence-column';
import { FencingToken } from './inventory.store';
import { SqlInventoryStore, SqlResult, WriteStep } from './sql-inventory.store';

/** NUMERIC(39,0) holds every token below 2^128 (fence-column.ts); BIGINT stops at 2^63. */
const FENCE_TYPE = 'NUMERIC(39,0)';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS products (
    id TEXT PRIMARY KEY,
    stock INTEGER NOT NULL CHECK (stock >= 0),
    fence ${FENCE_TYPE} NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS orders (
    id BIGSERIAL PRIMARY KEY,
    product_id TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    status TEXT NOT NULL DEFAULT 'live',
    fence ${FENCE_TYPE} NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS orders_by_product ON orders (product_id, status);
`;

/** Any lock id for pg_advisory_lock: instances starting together migrate one at a time. */
const MIGRATION_LOCK = 4_242_001;

/**
 * PostgreSQL (READ COMMITTED): the fenced `UPDATE ... WHERE fence = $t` re-checks the newest row
 * version, so a write from a holder whose token was overtaken changes nothing.
 */
export class PostgresInventoryStore extends SqlInventoryStore {
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
      await this.widenOldFences(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  protected encodeFence(token: FencingToken): string {
    return fenceDecimal(token);
  }

  protected async query(sql: string, params: unknown[]): Promise<SqlResult> {
    return run(this.pool, sql, params);
  }

  protected async writeAll(steps: WriteStep[]): Promise<SqlResult[] | null> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const results: SqlResult[] = [];
      for (const step of steps) {
        const result = await run(client, step.sql, step.params);
        if (step.mustChange && result.changes === 0) {
          await client.query('ROLLBACK');
          return null;
        }
        results.push(result);
      }
      await client.query('COMMIT');
      return results;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Tables made before tokens outgrew 64 bits have BIGINT fences; NUMERIC holds every BIGINT, so
   * the column is converted in place (a table rewrite, done once, under the migration lock).
   */
  private async widenOldFences(client: PoolClient): Promise<void> {
    const { rows } = await client.query<{ table_name: string; data_type: string }>(
      `SELECT table_name, data_type FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name IN ('products', 'orders')
         AND column_name = 'fence' AND data_type <> 'numeric'`,
    );
    for (const { table_name: table, data_type: oldType } of rows) {
      this.logger.log(`Migrating ${table}.fence from ${oldType} to ${FENCE_TYPE} (128-bit tokens)`);
      await client.query(`ALTER TABLE ${table} ALTER COLUMN fence TYPE ${FENCE_TYPE}`);
    }
  }
}

/** Runs a statement written with `?` placeholders (sql-inventory.store.ts) as `$1, $2, ...`. */
async function run(db: Pool | PoolClient, sql: string, params: unknown[]): Promise<SqlResult> {
  let n = 0;
  const { rows, rowCount } = await db.query(
    sql.replace(/\?/g, () => `$${++n}`),
    params,
  );
  return { rows, changes: rowCount ?? 0 };
}
