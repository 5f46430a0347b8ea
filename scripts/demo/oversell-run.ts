/** One run of the demo's main scenario: set the stock, send N concurrent orders, count. */
import { expectStatus, HttpJson } from './http-json';
import { sendOrders } from './order-load';
import { RunSummary, summarizeRun } from './run-summary';

export interface OversellRunOptions {
  name: string;
  http: HttpJson;
  urls: readonly string[];
  /** '/orders/unsafe' (no lock) or '/orders' (@DistributedLock + fencing). */
  endpoint: string;
  productId: string;
  stock: number;
  orders: number;
  onProgress?: (done: number, accepted: number, rejected: number) => void;
}

export async function runOversell(options: OversellRunOptions): Promise<RunSummary> {
  const { http, urls, productId, stock } = options;
  const product = `${urls[0]}/products/${productId}`;
  expectStatus(await http.put(product, { stock }), 200, `PUT ${product}`);
  const { outcomes, durationMs } = await sendOrders({ ...options, quantity: 1 });
  const after = expectStatus(await http.get(product), 200, `GET ${product}`);
  return summarizeRun({
    name: options.name,
    endpoint: options.endpoint,
    instances: urls.length,
    outcomes,
    initialStock: stock,
    finalStock: after.stock,
    sold: after.sold,
    durationMs,
  });
}
