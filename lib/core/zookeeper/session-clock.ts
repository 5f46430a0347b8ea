export interface SessionClockHandlers {
  /** Connected, but the server has been silent for 2/3 of the session timeout (half-open socket). */
  onSilent(): void;
  /** A connection attempt (TCP + handshake) is taking too long: try the next server. */
  onStuckConnecting(): void;
  /** Not heard from the server for a whole session timeout: the server has expired us by now. */
  onExpiredByClock(): void;
}

/**
 * Our own view of the session's liveness. node-zookeeper-client only pings when idle and never
 * notices missing replies, and never learns of expiry while partitioned. The Java client's rules:
 * read timeout = 2/3 of the session timeout; the session is surely gone once a full session
 * timeout has passed since the server was last heard.
 */
export class SessionClock {
  private lastHeard = Date.now();
  private timeoutMs: number;
  private isConnected = false;
  private everConnected = false;
  private attemptStartedAt = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    requestedTimeoutMs: number,
    private readonly handlers: SessionClockHandlers,
  ) {
    this.timeoutMs = requestedTimeoutMs;
  }

  start(): void {
    const interval = Math.max(50, Math.min(500, Math.floor(this.timeoutMs / 10)));
    this.timer = setInterval(() => this.tick(Date.now()), interval);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  heard(): void {
    this.lastHeard = Date.now();
  }

  connected(negotiatedTimeoutMs: number): void {
    if (negotiatedTimeoutMs > 0) this.timeoutMs = negotiatedTimeoutMs;
    this.isConnected = true;
    this.everConnected = true;
    this.attemptStartedAt = 0;
  }

  disconnected(): void {
    this.isConnected = false;
  }

  attempting(): void {
    this.attemptStartedAt = Date.now();
  }

  /** Milliseconds since the server was last heard from. */
  silenceMs(now = Date.now()): number {
    return now - this.lastHeard;
  }

  tick(now: number): void {
    const silence = this.silenceMs(now);
    if (this.isConnected) {
      if (silence > (this.timeoutMs * 2) / 3) {
        this.isConnected = false;
        this.handlers.onSilent();
      }
      return;
    }
    if (this.everConnected && silence > this.timeoutMs) {
      this.stop();
      this.handlers.onExpiredByClock();
      return;
    }
    if (this.attemptStartedAt && now - this.attemptStartedAt > Math.max(500, this.timeoutMs / 3)) {
      this.attemptStartedAt = now;
      this.handlers.onStuckConnecting();
    }
  }
}
