/** Owns the client's estimate of how long a request takes to be answered while all is well. */

/**
 * The round trip of the client's requests, smoothed as TCP does (RFC 6298): `timeoutMs` is the
 * smoothed round trip plus four times its variation, what a request answered in the usual way
 * takes at most. One estimate per client, fed by the replies of all its sessions (they talk to
 * the same servers); undefined until a first reply.
 */
export class RoundTrips {
  private smoothed?: number;
  private variation = 0;

  /** A request was answered `ms` milliseconds after it was sent. */
  observe(ms: number): void {
    if (!(ms >= 0)) return;
    if (this.smoothed === undefined) {
      this.smoothed = ms;
      this.variation = ms / 2;
      return;
    }
    this.variation = 0.75 * this.variation + 0.25 * Math.abs(this.smoothed - ms);
    this.smoothed = 0.875 * this.smoothed + 0.125 * ms;
  }

  /** What an answered request takes at most, as observed; undefined before any answer. */
  get timeoutMs(): number | undefined {
    return this.smoothed === undefined ? undefined : this.smoothed + 4 * this.variation;
  }
}
