/** Owns our own view of the session's liveness: heard from when, and what a silence means. */

/** What a tick of the clock asks of the session (docs/design.md "The session's states"). */
export type ClockVerdict =
  /** Not heard from for a whole session timeout: the server has expired the session by now. */
  | 'expired'
  /** Connected, but the server has been silent for 2/3 of the timeout (a half-open socket). */
  | 'silent'
  /** Connected, no answer for half the timeout: a request's answer tells more than a ping's. */
  | 'quiet'
  /** A connection attempt (TCP + handshake) is taking too long: try the next server. */
  | 'stuck';

/**
 * Our own view of the session's liveness: the wire never decides a session is gone on its own
 * (a partitioned client hears nothing of its expiry). The Java client's rules:
 * read timeout = 2/3 of the session timeout; the session is surely gone once a full session
 * timeout has passed since the server was last heard. Within 2/3 of it (the safe window) the
 * server cannot have expired us yet: only then may a lock be granted or trusted
 * (docs/design.md 'What "holding" means, and when it ends').
 *
 * A process stopped (SIGSTOP, GC) or an event loop blocked for a while reads, when it wakes, data
 * that may have arrived long ago: after such a stall, arriving data no longer counts as news from
 * the server until a reply to a request sent after the stall comes back (`confirmed`). The clock
 * keeps no timer and calls nothing: the session ticks it and acts on what it answers.
 */
export class SessionClock {
  private lastHeard = Date.now();
  private timeoutMs: number;
  private isConnected = false;
  private everConnected = false;
  private attemptStartedAt = 0;
  private interval = 500;
  /** Last time this process was seen running (a tick, or data read without a stall). */
  private lastAwakeAt = Date.now();
  /** When the last stall ended; data read since counts only once a later request is answered. */
  private resumedAt = 0;
  private untrusted = false;

  constructor(private readonly requestedTimeoutMs: number) {
    this.timeoutMs = requestedTimeoutMs;
  }

  /** Starts the clock now: the session ticks it every `tickMs` from here. */
  start(): void {
    this.interval = Math.max(50, Math.min(500, Math.floor(this.timeoutMs / 10)));
    this.lastAwakeAt = Date.now();
  }

  get tickMs(): number {
    return this.interval;
  }

  /**
   * An answer to one of our requests was read just now (never a watch notification). True when
   * this process stalled before it: the answer proves nothing, and a request must be sent (only
   * its reply proves life).
   */
  heard(now = Date.now()): boolean {
    if (this.noticeStall(now)) return true;
    if (!this.untrusted) this.lastHeard = now;
    return false;
  }

  /** A request sent at `sentAt` was answered: the server had our session at sentAt or later. */
  confirmed(sentAt: number): void {
    if (sentAt > this.lastHeard) this.lastHeard = sentAt;
    if (sentAt >= this.resumedAt) this.untrusted = false;
  }

  /**
   * Connected, with the session timeout the server negotiated. The clock runs on the smaller of
   * it and the one asked for: a server raises an ask only when it is below the server's minimum,
   * and a shorter clock can only tell a loss early, never late. False for a timeout that is not
   * positive (Java's client ends the session on it): the caller ends the session.
   */
  connected(negotiatedTimeoutMs: number): boolean {
    if (!(negotiatedTimeoutMs > 0)) return false;
    this.timeoutMs = Math.min(this.requestedTimeoutMs, negotiatedTimeoutMs);
    // The handshake answers the connect request of this attempt.
    if (this.attemptStartedAt) this.confirmed(this.attemptStartedAt);
    this.isConnected = true;
    this.everConnected = true;
    this.attemptStartedAt = 0;
    return true;
  }

  disconnected(): void {
    this.isConnected = false;
  }

  attempting(): void {
    this.attemptStartedAt = Date.now();
  }

  /** A stall happened and no request sent since has been answered yet. */
  get stale(): boolean {
    return this.untrusted;
  }

  /** Milliseconds since the server was last heard from. */
  silenceMs(now = Date.now()): number {
    return now - this.lastHeard;
  }

  /** 2/3 of the session timeout: heard from within it, the server still has our session. */
  get safeWindowMs(): number {
    return Math.floor((this.timeoutMs * 2) / 3);
  }

  /** Heard from within the safe window (connected or not). */
  withinSafeWindow(now = Date.now()): boolean {
    return this.silenceMs(now) <= this.safeWindowMs;
  }

  /**
   * The rules, applied at `now`: `stalled` when this process did not run for a while before it
   * (a request must be sent, as for heard), and the verdict, if any.
   */
  tick(now: number): { stalled: boolean; verdict?: ClockVerdict } {
    const stalled = this.noticeStall(now);
    const silence = this.silenceMs(now);
    // First: a silence longer than the session timeout ends the session, even while the
    // socket still looks connected (a process that was paused and just woke up).
    if (this.everConnected && silence > this.timeoutMs) return { stalled, verdict: 'expired' };
    if (this.isConnected) {
      if (silence > this.safeWindowMs) {
        this.isConnected = false;
        return { stalled, verdict: 'silent' };
      }
      return { stalled, verdict: silence > this.timeoutMs / 2 ? 'quiet' : undefined };
    }
    if (this.attemptStartedAt && now - this.attemptStartedAt > Math.max(500, this.timeoutMs / 3)) {
      this.attemptStartedAt = now;
      return { stalled, verdict: 'stuck' };
    }
    return { stalled };
  }

  /**
   * Whether this process did not run for a while before `now` (longer than a few ticks, and
   * than 1/6 of the session timeout: data read late by less than that is still inside the
   * 1/3 margin the safe window leaves).
   */
  private noticeStall(now: number): boolean {
    const stalled = now - this.lastAwakeAt > Math.max(2 * this.interval, this.timeoutMs / 6);
    this.lastAwakeAt = now;
    if (!stalled) return false;
    this.untrusted = true;
    this.resumedAt = now;
    return true;
  }
}
