/** Owns a session's state: one phase, changed only along TRANSITIONS, and the one way it ends. */

/** The state a session reports (ZkSession.state). */
export type SessionState = 'connecting' | 'connected' | 'suspended' | 'lost' | 'closed';

export type LossReason = 'session-expired' | 'connection-lost';

export type Phase =
  /** No session yet, or its credentials are not confirmed yet. */
  | 'connecting'
  | 'connected'
  /** The connection dropped; the server may still hold the session. */
  | 'suspended'
  /** The owner closed it: CLOSE_SESSION sent, waiting for the server to close the socket. */
  | 'closing'
  /** Over for us; still closing itself on the server in the background. */
  | 'lost'
  /** Ended after the owner's close: no socket, no timer. */
  | 'closed'
  /** Ended after a loss (still reported as lost). */
  | 'lost-closed';

/** Every phase a phase may move to; any other move is refused. */
export const TRANSITIONS: Readonly<Record<Phase, readonly Phase[]>> = {
  connecting: ['connected', 'closing', 'lost'],
  connected: ['connected', 'suspended', 'closing', 'lost'],
  suspended: ['connected', 'closing', 'lost'],
  closing: ['lost', 'closed'],
  lost: ['lost-closed'],
  closed: [],
  'lost-closed': [],
};

const LIVE: readonly Phase[] = ['connecting', 'connected', 'suspended'];

/** What the lifecycle does to the rest of the session. */
export interface LifecycleEffects {
  emit(event: 'connected' | 'reconnected' | 'suspended' | 'closed'): void;
  emit(event: 'lost', reason: LossReason): void;
  /** Whether a connection to a server is up right now. */
  socketConnected(): boolean;
  /** The session takes no more requests: it left the live phases (closing, lost), once. */
  refuseRequests(): void;
  /** Asks the server to close the session (its ephemeral nodes go at once). */
  closeOnServer(): void;
  /** Ends the client (no socket, no reconnect) and stops every timer of the session. */
  release(): void;
  /** Drops every listener, once 'closed' was emitted. */
  forget(): void;
}

/**
 * The state machine of one session. Loss and close share one ending: `endWithin` asks the
 * server to close the session when a connection is up and gives it a grace period, `end` is
 * the only place a session ends (socket, timers, listeners, the `closed` promise). A lost
 * session keeps reconnecting in the background to close itself on the server, unless its owner
 * closes it: then it ends at once (its nodes count as gone already).
 */
export class SessionLifecycle {
  private current: Phase = 'connecting';
  /** What `state` reports while closing: the state the owner closed it in. */
  private shown: SessionState = 'connecting';
  private timer?: NodeJS.Timeout;
  private endsAt = Infinity;
  /** How long a lost session may still take to close itself once a server answers again. */
  private lostGraceMs = 0;
  private resolveClosed!: () => void;
  /** Resolves once the session has ended. */
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));

  constructor(private readonly effects: LifecycleEffects) {}

  get phase(): Phase {
    return this.current;
  }

  get state(): SessionState {
    return this.shown;
  }

  /** Connecting, connected or suspended, also while the owner's close is under way. */
  get alive(): boolean {
    return this.shown === 'connected' || this.shown === 'suspended' || this.shown === 'connecting';
  }

  /** May take requests: live, and not being closed. */
  get live(): boolean {
    return LIVE.includes(this.current);
  }

  /** Lost or ended: nothing the client reports changes it any more. */
  get over(): boolean {
    return this.current === 'lost' || this.ended;
  }

  get ended(): boolean {
    return this.current === 'closed' || this.current === 'lost-closed';
  }

  /** A connection carries our (confirmed) session. */
  connected(): void {
    const first = this.current === 'connecting';
    if (this.to('connected')) this.effects.emit(first ? 'connected' : 'reconnected');
  }

  /** The connection dropped. */
  disconnected(): void {
    if (this.current === 'connected' && this.to('suspended')) this.effects.emit('suspended');
  }

  /**
   * The session is over for us; it closes itself on the server within `graceMs` if it can.
   * `untilReachable`: with no connection now, it keeps trying with no deadline until a server
   * answers again (reachable()), and only then gets `graceMs`. A server that restarts restores
   * the session from its log and keeps its nodes until it expires it, a session timeout after
   * its start, however long it was down: closed by us, they go at once.
   */
  lose(reason: LossReason, graceMs: number, untilReachable = false): void {
    if (!this.to('lost')) return;
    this.lostGraceMs = graceMs;
    this.effects.emit('lost', reason);
    if (untilReachable && !this.effects.socketConnected()) return;
    this.endWithin(graceMs);
  }

  /** A server answers again (the owner's next session connected): a lost session gets its grace. */
  reachable(): void {
    if (this.current === 'lost') this.arm(this.lostGraceMs);
  }

  /** The owner's close: resolves once ended, within `graceMs` (at once without a connection). */
  close(graceMs: number): Promise<void> {
    if (this.live) {
      this.to('closing');
      this.endWithin(graceMs);
    } else if (this.current === 'lost') {
      // Nothing is left to protect: wait only for a close already sent on a connection.
      if (this.effects.socketConnected()) this.arm(graceMs);
      else this.end();
    }
    return this.closed;
  }

  /** Whether a (re)connect attempt may start; a session being closed ends instead. */
  mayConnect(): boolean {
    if (this.current === 'closing') this.end();
    return !this.ended;
  }

  /** A connection came up: a lost session closes itself on the server now, within its grace. */
  socketConnected(): void {
    if (this.current !== 'lost') return;
    this.effects.closeOnServer();
    this.arm(this.lostGraceMs);
  }

  /** The socket closed and the client will not reconnect. */
  socketClosedForGood(): void {
    this.end();
  }

  private endWithin(graceMs: number): void {
    if (this.timer) return; // already ending
    if (this.effects.socketConnected()) {
      this.effects.closeOnServer();
      this.arm(graceMs);
    } else if (this.current === 'lost') {
      this.arm(graceMs); // closed on the server if a reconnect comes in time (socketConnected)
    } else {
      this.end();
    }
  }

  /** Ends the session within `ms` at the latest (a timer that never keeps the process alive). */
  private arm(ms: number): void {
    const at = Date.now() + ms;
    if (at >= this.endsAt) return;
    clearTimeout(this.timer);
    this.endsAt = at;
    this.timer = setTimeout(() => this.end(), ms);
    this.timer.unref();
  }

  /** The one place a session ends, whatever ended it. */
  private end(): void {
    if (this.ended) return;
    clearTimeout(this.timer);
    if (this.live) this.to('closing');
    this.to(this.current === 'lost' ? 'lost-closed' : 'closed');
    this.effects.release();
    this.effects.emit('closed');
    this.effects.forget();
    this.resolveClosed();
  }

  private to(next: Phase): boolean {
    if (!TRANSITIONS[this.current].includes(next)) return false;
    const wasLive = this.live;
    this.current = next;
    if (wasLive && !this.live) this.effects.refuseRequests();
    if (next !== 'closing' && next !== 'lost-closed') this.shown = next;
    return true;
  }
}
