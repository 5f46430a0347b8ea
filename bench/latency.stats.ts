/** Latency samples in milliseconds, and the percentiles the report prints. */
export class LatencyRecorder {
  private readonly samples: number[] = [];

  /** Starts a timer; call the returned function when the operation completes. */
  start(): () => void {
    const started = process.hrtime.bigint();
    return () => this.add(Number(process.hrtime.bigint() - started) / 1e6);
  }

  add(ms: number): void {
    this.samples.push(ms);
  }

  addAll(ms: readonly number[]): void {
    for (const value of ms) this.samples.push(value);
  }

  get count(): number {
    return this.samples.length;
  }

  values(): number[] {
    return [...this.samples];
  }

  percentile(p: number): number {
    return percentile(this.samples, p);
  }
}

/** Nearest-rank percentile (p in 0..100) of unsorted values; 0 when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Rounds to 3 significant decimals for reports. */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
