/** Waiters and holders of this process, by label: what the observable gauges report. */
export class LockActivity {
  private readonly byLabel = new Map<string, { waiters: number; holders: number }>();

  change(label: string, what: 'waiters' | 'holders', delta: 1 | -1): void {
    let counts = this.byLabel.get(label);
    if (!counts) this.byLabel.set(label, (counts = { waiters: 0, holders: 0 }));
    // Never below 0: a lock taken before telemetry was attached may be released after.
    counts[what] = Math.max(0, counts[what] + delta);
  }

  /** Every label seen so far (a bounded set), with its current count; 0 once idle. */
  entries(what: 'waiters' | 'holders'): [string, number][] {
    return [...this.byLabel].map(([label, counts]) => [label, counts[what]]);
  }
}
