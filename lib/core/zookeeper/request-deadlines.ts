/** Owns the deadlines of one session's requests: one timer for all of them. */
/**
 * Timeouts of one session's requests with a single timer instead of one per request. Every
 * request gets the same timeout, so the order of insertion is the order of deadlines: the timer
 * only ever waits for the oldest pending request. It is unref'd (the session's socket keeps the
 * process alive while requests are pending) and stops once nothing is pending at its deadline.
 */
export class RequestDeadlines {
  private readonly pending = new Map<number, { deadline: number; expire(): void }>();
  private nextId = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly timeoutMs: number) {}

  /** Calls `expire` once the timeout has passed, unless `settle(id)` comes first. */
  add(expire: () => void): number {
    const id = this.nextId++;
    this.pending.set(id, { deadline: Date.now() + this.timeoutMs, expire });
    if (!this.timer) this.arm(this.timeoutMs);
    return id;
  }

  settle(id: number): void {
    this.pending.delete(id);
  }

  /** Stops the timer when nothing is pending (a closed session leaves no timer behind). */
  idle(): void {
    if (this.pending.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => this.sweep(), delayMs);
    this.timer.unref();
  }

  private sweep(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const [id, entry] of this.pending) {
      if (entry.deadline > now) return this.arm(entry.deadline - now);
      this.pending.delete(id);
      entry.expire();
    }
  }
}
