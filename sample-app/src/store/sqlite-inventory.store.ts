import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fenceText } from './fence-column';
import { FencingToken } from './inventory.store';
import { SqlInventoryStore, SqlResult, WriteStep } from './sql-inventory.store';

/** How long a statement waits for another process's lock on the file. */
const BUSY_TIMEOUT_MS = 5000;

/** Fences are fixed-width decimal text (fence-column.ts): text order is token order. */
const FENCE_COLUMN = `fence TEXT NOT NULL DEFAULT '${fenceText(0n)}'
  CHECK (length(fence) = ${fenceText(0n).length} AND fence NOT GLOB '*[^0-9]*')`;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS products (
    id TEXT PRIMARY KEY,
    stock INTEGER NOT NULL CHECK (stock >= 0),
    ${FENCE_COLUMN}
  );
  CREATE TABLE IF NOT EXISTS orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    product_id TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    status TEXT NOT NULL DEFAULT 'live',
    ${FENCE_COLUMN}
  );
  CREATE INDEX IF NOT EXISTS orders_by_product ON orders (product_id, status);
`;

/**
 * One SQLite file shared by every local instance (WAL mode; writers take the file's write lock
 * with BEGIN IMMEDIATE and wait up to 5 s for it). better-sqlite3 is synchronous: each call is
 * one short statement or one synchronous transaction, so no other request's statement can run
 * inside a transaction; the slow part of an order is the awaited payment step between them.
 */
export class SqliteInventoryStore extends SqlInventoryStore {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    super();
    mkdirSync(dirname(file), { recursive: true });
    this.db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  }

  async migrate(): Promise<void> {
    await this.useWal();
    this.db.pragma('synchronous = NORMAL');
    this.db
      .transaction(() => {
        this.db.exec(SCHEMA);
        this.refuseOldSchema();
      })
      .immediate();
  }

  /**
   * Switching a file to WAL takes its exclusive lock, and SQLite does not run the busy handler
   * for it: instances starting together on a new file would get SQLITE_BUSY at once. WAL is a
   * property of the file, so read the mode first (after the first start there is nothing to do),
   * and retry the switch, with pauses, within the same budget as any other busy wait.
   */
  private async useWal(): Promise<void> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    let mode: unknown;
    let busy: unknown;
    for (let pause = 5; ; pause = Math.min(2 * pause, 100)) {
      try {
        mode = this.db.pragma('journal_mode', { simple: true });
        if (mode === 'wal') return;
        mode = this.db.pragma('journal_mode = WAL', { simple: true });
        if (mode === 'wal') return;
      } catch (err) {
        // better-sqlite3 reports extended codes: SQLITE_BUSY, SQLITE_BUSY_RECOVERY, ...
        if (!String((err as { code?: string }).code).startsWith('SQLITE_BUSY')) throw err;
        busy = err;
      }
      if (Date.now() >= deadline) {
        const last = busy ? `; last error: ${String(busy)}` : '';
        throw new Error(
          `SQLite file "${this.file}" could not be switched to WAL mode within ` +
            `${BUSY_TIMEOUT_MS} ms (journal mode "${String(mode)}"${last}): ` +
            'another process may hold it in a long transaction (stop it and start this one ' +
            'again), or the file system does not support WAL (use a local disk).',
          { cause: busy },
        );
      }
      // Jitter, so that instances started together do not retry in step.
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
    }
  }

  async close(): Promise<void> {
    this.db.close();
  }

  protected encodeFence(token: FencingToken): string {
    return fenceText(token);
  }

  protected async query(sql: string, params: unknown[]): Promise<SqlResult> {
    return this.execute(sql, params);
  }

  protected async writeAll(steps: WriteStep[]): Promise<SqlResult[] | null> {
    const run = this.db.transaction(() =>
      steps.map((step) => {
        const result = this.execute(step.sql, step.params);
        if (step.mustChange && result.changes === 0) throw new StaleWrite();
        return result;
      }),
    );
    try {
      return run.immediate();
    } catch (err) {
      if (err instanceof StaleWrite) return null; // the transaction was rolled back
      throw err;
    }
  }

  private execute(sql: string, params: unknown[]): SqlResult {
    const statement = this.db.prepare(sql);
    if (!statement.reader) return { rows: [], changes: statement.run(...params).changes };
    const rows = statement.all(...params) as Record<string, unknown>[];
    return { rows, changes: rows.length };
  }

  /**
   * A file made before tokens outgrew 64 bits has INTEGER fences (better-sqlite3 throws on a
   * token of 2^63 and above, and integers never equal our text). SQLite cannot change a column's
   * type in place, and this is demo data: say so and stop rather than misbehave.
   */
  private refuseOldSchema(): void {
    for (const table of ['products', 'orders']) {
      const column = this.db
        .prepare(`SELECT type FROM pragma_table_info(?) WHERE name = 'fence'`)
        .get(table) as { type: string } | undefined;
      if (column?.type.toUpperCase() !== 'TEXT') {
        throw new Error(
          `SQLite file "${this.file}" has an old schema: ${table}.fence is ` +
            `${column ? column.type : 'missing'}, but fencing tokens need up to 39 digits ` +
            '(stored as TEXT now). It holds demo data only: delete the file and its -wal/-shm ' +
            'files (by default the .data/ folder) and start again to recreate it.',
        );
      }
    }
  }
}

class StaleWrite extends Error {}
