/** Sends N concurrent orders spread round-robin over the instances and records each outcome. */
import { HttpJson } from './http-json';
import type { OrderOutcome } from './run-summary';

export interface OrderLoadOptions {
  http: HttpJson;
  /** Base URLs of the instances. */
  urls: readonly string[];
  /** '/orders' or '/orders/unsafe'. */
  endpoint: string;
  productId: string;
  orders: number;
  quantity?: number;
  /** Called after each answer with (done, accepted, rejected). */
  onProgress?: (done: number, accepted: number, rejected: number) => void;
}

export async function sendOrders(options: OrderLoadOptions): Promise<{
  outcomes: OrderOutcome[];
  durationMs: number;
}> {
  const { http, urls, endpoint, productId, orders, quantity = 1 } = options;
  let done = 0;
  let accepted = 0;
  let rejected = 0;
  const started = performance.now();
  const one = async (i: number): Promise<OrderOutcome> => {
    const t0 = performance.now();
    let outcome: OrderOutcome;
    try {
      const res = await http.post(`${urls[i % urls.length]}${endpoint}`, { productId, quantity });
      const error = res.status === 201 ? undefined : errorCode(res.body);
      outcome = { status: res.status, error, latencyMs: performance.now() - t0 };
    } catch (err) {
      outcome = { status: 0, error: (err as Error).message, latencyMs: performance.now() - t0 };
    }
    done++;
    if (outcome.status === 201) accepted++;
    else if (outcome.error === 'OUT_OF_STOCK') rejected++;
    options.onProgress?.(done, accepted, rejected);
    return outcome;
  };
  const outcomes = await Promise.all(Array.from({ length: orders }, (_, i) => one(i)));
  return { outcomes, durationMs: performance.now() - started };
}

function errorCode(body: any): string {
  if (body && typeof body === 'object') return String(body.error ?? body.message ?? 'unknown');
  return String(body).slice(0, 80);
}
