/** Pure arithmetic of a demo run: outcomes in, the table's numbers out. */

export interface OrderOutcome {
  status: number;
  /** The body's `error` code (OUT_OF_STOCK, STALE_FENCING_TOKEN...) or the HTTP error text. */
  error?: string;
  latencyMs: number;
}

export interface RunSummary {
  name: string;
  endpoint: string;
  instances: number;
  requests: number;
  /** 201 Created. */
  accepted: number;
  /** 409 OUT_OF_STOCK. */
  rejected: number;
  /** Anything else (lock wait timeouts, 5xx, network errors), by code. */
  failed: number;
  failures: Record<string, number>;
  initialStock: number;
  finalStock: number;
  /** Units in live orders, as the store counts them. */
  sold: number;
  /** Units sold beyond the initial stock. */
  oversold: number;
  /** Order requests answered per second over the whole run. */
  ordersPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  durationMs: number;
}

/** Nearest-rank percentile of an ascending array (0 for an empty one). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarizeRun(input: {
  name: string;
  endpoint: string;
  instances: number;
  outcomes: readonly OrderOutcome[];
  initialStock: number;
  finalStock: number;
  sold: number;
  durationMs: number;
}): RunSummary {
  const { outcomes } = input;
  const failures: Record<string, number> = {};
  let accepted = 0;
  let rejected = 0;
  for (const outcome of outcomes) {
    if (outcome.status === 201) accepted++;
    else if (outcome.status === 409 && outcome.error === 'OUT_OF_STOCK') rejected++;
    else {
      const key = `${outcome.status || 'network'} ${outcome.error ?? ''}`.trim();
      failures[key] = (failures[key] ?? 0) + 1;
    }
  }
  const latencies = outcomes.map((o) => o.latencyMs).sort((a, b) => a - b);
  const seconds = Math.max(input.durationMs, 1) / 1000;
  return {
    name: input.name,
    endpoint: input.endpoint,
    instances: input.instances,
    requests: outcomes.length,
    accepted,
    rejected,
    failed: outcomes.length - accepted - rejected,
    failures,
    initialStock: input.initialStock,
    finalStock: input.finalStock,
    sold: input.sold,
    oversold: Math.max(0, input.sold - input.initialStock),
    ordersPerSecond: Math.round(outcomes.length / seconds),
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    durationMs: Math.round(input.durationMs),
  };
}
