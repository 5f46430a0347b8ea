/**
 * The sample app on a 3-node ZooKeeper ensemble. There a zxid carries the leader epoch (>= 1) in
 * its high 32 bits, so every fencing token `(czxid << 64) | (sequence << 32) | generation` is
 * >= 2^96: past a 64-bit column, unlike the standalone server's small tokens. Two instances on
 * PostgreSQL (NUMERIC(39,0) fences) and one on SQLite (40-digit text fences), each instance
 * connected to a different ensemble member, must store those tokens exactly and never oversell.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { AppInstance } from '../../scripts/demo/app-instance';
import { HttpJson, JsonResponse } from '../../scripts/demo/http-json';
import { postgresFromEnv, PostgresServer } from '../support/postgres';
import { ZooKeeperServer } from '../support/zookeeper';
import { scaled } from '../support/time-scale';

const TWO_POW_64 = 1n << 64n;
const suffix = randomBytes(4).toString('hex');
const product = (name: string) => `${name}-${suffix}`;

let dir: string;
let zooKeeper: ZooKeeperServer | undefined;
let pgServer: PostgresServer | undefined;
let pg: Client | undefined;
let sqliteFile: string;
const http = new HttpJson();
const apps: AppInstance[] = [];
/** app-A and app-B share PostgreSQL; app-C has its own SQLite file. */
let [a, b, c] = ['', '', ''];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'inventory-ensemble-'));
  sqliteFile = join(dir, 'inventory.sqlite');
  const [zk, postgres] = await Promise.allSettled([
    ZooKeeperServer.start({ size: 3 }),
    postgresFromEnv(),
  ]);
  if (zk.status === 'fulfilled') zooKeeper = zk.value;
  if (postgres.status === 'fulfilled') pgServer = postgres.value.server;
  if (zk.status === 'rejected') throw zk.reason;
  if (postgres.status === 'rejected') throw postgres.reason;
  const pgUrl = postgres.value.connectionString;
  pg = new Client({ connectionString: pgUrl });
  await pg.connect();
  const members = zk.value.members;
  const start = (name: string, member: number, databaseUrl: string) =>
    AppInstance.start({
      name,
      logFile: join(dir, `${name}.log`),
      env: {
        ZK_CONNECT: `127.0.0.1:${members[member].clientPort}`,
        DATABASE_URL: databaseUrl,
        STOCK_IO_DELAY_MS: '20',
      },
    });
  const started = await Promise.allSettled([
    start('app-A', 0, pgUrl),
    start('app-B', 1, pgUrl),
    start('app-C', 2, `sqlite:${sqliteFile}`),
  ]);
  for (const result of started) if (result.status === 'fulfilled') apps.push(result.value);
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  [a, b, c] = apps.map((app) => app.url);
}, scaled(120_000));

afterAll(async () => {
  http.close();
  await Promise.allSettled(apps.map((app) => app.stop()));
  await pg?.end().catch(() => undefined);
  await Promise.allSettled([pgServer?.stop(), zooKeeper?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, scaled(60_000));

async function pgFence(productId: string): Promise<bigint> {
  const { rows } = await pg!.query('SELECT fence::text AS fence FROM products WHERE id = $1', [
    productId,
  ]);
  return BigInt(rows[0].fence);
}

/** The raw text of SQLite's fence column (read through a connection of our own). */
function sqliteFenceText(productId: string): string {
  const db = new Database(sqliteFile, { fileMustExist: true });
  try {
    const row = db.prepare('SELECT fence FROM products WHERE id = ?').get(productId) as {
      fence: string;
    };
    return row.fence;
  } finally {
    db.close();
  }
}

async function setStock(url: string, id: string, stock: number): Promise<void> {
  const res = await http.put(`${url}/products/${id}`, { stock });
  expect({ status: res.status, body: res.body }).toEqual({
    status: 200,
    body: { id, stock, sold: 0 },
  });
}

/** Places one order and returns its fencing token; fails unless the answer is 201. */
async function order(url: string, productId: string): Promise<bigint> {
  const res = await http.post(`${url}/orders`, { productId, quantity: 1 });
  expect({ status: res.status, body: res.body }).toEqual({
    status: 201,
    body: expect.objectContaining({ productId, quantity: 1, fencingToken: expect.any(String) }),
  });
  return BigInt(res.body.fencingToken);
}

function statuses(answers: JsonResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status, body } of answers) {
    const key = status === 201 ? '201' : `${status} ${body?.error}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('sample app on a 3-node ZooKeeper ensemble (tokens of 2^96 and above)', () => {
  it('gets fencing tokens past 64 bits from the ensemble: the leader epoch is in the czxid', async () => {
    const id = product('epoch');
    await setStock(a, id, 1);
    const token = await order(a, id);
    expect(token).toBeGreaterThanOrEqual(TWO_POW_64);
    expect(token >> 96n).toBeGreaterThanOrEqual(1n); // the epoch: the czxid's high 32 bits
  });

  it('stores each order token in the PostgreSQL row; the next holder, on another member, has a larger one', async () => {
    const id = product('pg-sequence');
    await setStock(a, id, 10);
    const first = await order(a, id);
    expect(await pgFence(id)).toBe(first);
    const second = await order(b, id);
    expect(second).toBeGreaterThan(first);
    expect(await pgFence(id)).toBe(second);
    expect((await http.get(`${b}/products/${id}`)).body).toEqual({ id, stock: 8, sold: 2 });
  });

  it('sells exactly the stock under 60 concurrent orders over two instances on PostgreSQL', async () => {
    const id = product('pg-concurrent');
    await setStock(a, id, 40);
    const urls = [a, b];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        http.post(`${urls[i % 2]}/orders`, { productId: id, quantity: 1 }),
      ),
    );
    expect(statuses(answers)).toEqual({ '201': 40, '409 OUT_OF_STOCK': 20 });
    expect((await http.get(`${a}/products/${id}`)).body).toEqual({ id, stock: 0, sold: 40 });
    // 30 requests per instance and 40 sold: each instance sold at least 10.
    const soldBy = urls.map((_, k) => answers.filter((r, i) => i % 2 === k && r.status === 201));
    for (const one of soldBy) expect(one.length).toBeGreaterThanOrEqual(10);
    const sold = answers.filter((r) => r.status === 201).map((r) => r.body);
    const tokens = [...sold]
      .sort((x, y) => x.orderId - y.orderId)
      .map((body) => BigInt(body.fencingToken));
    expect(new Set(tokens).size).toBe(40);
    for (const token of tokens) expect(token).toBeGreaterThanOrEqual(TWO_POW_64);
    // Sales were written one holder at a time: in order of sale, tokens only grow.
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    expect(await pgFence(id)).toBeGreaterThanOrEqual(tokens[tokens.length - 1]);
  });

  it('keeps the same tokens exactly in SQLite 40-digit text fences', async () => {
    const id = product('sqlite');
    await setStock(c, id, 3);
    const first = await order(c, id);
    expect(first).toBeGreaterThanOrEqual(TWO_POW_64);
    expect(sqliteFenceText(id)).toBe(first.toString().padStart(40, '0'));
    const second = await order(c, id);
    expect(second).toBeGreaterThan(first);
    expect(sqliteFenceText(id)).toBe(second.toString().padStart(40, '0'));
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => http.post(`${c}/orders`, { productId: id, quantity: 1 })),
    );
    expect(statuses(answers)).toEqual({ '201': 1, '409 OUT_OF_STOCK': 4 });
    expect((await http.get(`${c}/products/${id}`)).body).toEqual({ id, stock: 0, sold: 3 });
  });
});
