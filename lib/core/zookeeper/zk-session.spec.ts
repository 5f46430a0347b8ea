/**
 * The session's state machine (docs/design.md "The session's states"), driven through its inputs:
 * the wire's events (a stand-in wire the spec plays the server with), the clock (fake timers)
 * and the owner's calls. The log holds what the session emitted and asked of the wire, in order.
 */
import { AssertionError } from 'node:assert';
import { vi } from 'vitest';
import {
  Phase,
  RequestDeadlines,
  RoundTrips,
  SessionClock,
  TRANSITIONS,
  ZkSession,
  validatePath,
} from './zk-session';
import type { WireHandlers, WireOptions, ZkWire } from './zk-wire';
import { ZkCredentials } from './zk-credentials';
import { ZkCode } from './zk-errors';

const TIMEOUT = 3_000;

/** The wire as the session sees it; the spec plays its events. */
class StandInWire {
  connected = false;
  /** As the wire: a close written on the connection up now (`connected` is false from then on). */
  closeOnConnection = false;
  negotiatedTimeoutMs = 0;
  /** Requests written, each with the callback that answers it. */
  readonly requests: ((code: number) => void)[] = [];

  constructor(
    readonly handlers: WireHandlers,
    private readonly log: string[],
  ) {}

  start(): void {}
  startXidsAt(): void {}
  watch(): void {}

  request(_type: number, _frame: Buffer, answer: (code: number) => void): void {
    this.requests.push(answer);
  }

  /** As the wire: CLOSE_SESSION asked for (written if connected); `connected` is false from now on. */
  closeSession(): void {
    this.log.push('closeSession');
    this.closeOnConnection = this.connected;
    this.connected = false;
  }

  dropSocket(): void {
    this.log.push('dropSocket');
  }

  /** As the wire: its requests not yet answered fail with CONNECTION_LOSS. */
  end(): void {
    this.log.push('end');
    for (const answer of this.requests.splice(0)) answer(ZkCode.CONNECTION_LOSS);
  }
}

function setup(options: { auth?: string } = {}) {
  const log: string[] = [];
  let wire!: StandInWire;
  const session = new ZkSession({
    connectionString: '127.0.0.1:2181',
    sessionTimeoutMs: TIMEOUT,
    requestTimeoutMs: 1_000,
    credentials: options.auth ? ZkCredentials.from({ auth: options.auth }) : undefined,
    openWire: (wireOptions: WireOptions) => {
      wire = new StandInWire(wireOptions.handlers, log);
      return wire as unknown as ZkWire;
    },
  });
  for (const event of ['connected', 'reconnected', 'suspended', 'closed'])
    session.on(event, () => log.push(event));
  session.on('lost', (reason: string) => log.push(`lost ${reason}`));
  session.start();
  /** A handshake completed on a new connection. */
  const handshake = (): void => {
    wire.connected = true;
    wire.closeOnConnection = false;
    wire.negotiatedTimeoutMs = TIMEOUT;
    wire.handlers.connected('abc', TIMEOUT);
  };
  /** The connection dropped. */
  const drop = (): void => {
    wire.connected = false;
    wire.closeOnConnection = false;
    wire.handlers.disconnected();
  };
  /** Silent, with no connection, past the session timeout: our clock ends the session. */
  const loseToClock = (): void => {
    drop();
    vi.advanceTimersByTime(TIMEOUT + 500);
  };
  return { session, log, wire: () => wire, handshake, drop, loseToClock };
}

/** Flushes process.nextTick callbacks (fake timers leave them real). */
const ticks = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));

describe('ZkSession, its state machine', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('reports connected, suspended and reconnected along the table', () => {
    const { session, log, handshake, drop } = setup();
    expect(session.state).toBe('connecting');
    drop(); // before the first session: nothing to report
    handshake();
    drop();
    handshake();
    expect(log).toEqual(['connected', 'suspended', 'reconnected']);
    expect(session.state).toBe('connected');
  });

  it('with auth, is connected only once an exists sent behind the AUTH packets is answered', () => {
    const { session, log, wire, handshake } = setup({ auth: 'user:secret' });
    handshake();
    expect(session.state).toBe('connecting');
    expect(wire().requests).toHaveLength(1);
    wire().requests[0](0);
    return ticks().then(() => {
      expect(log).toEqual(['connected']);
      expect(session.state).toBe('connected');
    });
  });

  it('closes a connected session on the server and ends once its socket closes', async () => {
    const { session, log, wire, handshake } = setup();
    handshake();
    const closed = session.close(1_000);
    expect(session.phase).toBe('closing');
    expect(session.state).toBe('connected'); // reported as it was until it has ended
    await expect(session.create('/a', null, 0)).rejects.toMatchObject({
      code: ZkCode.SESSION_GONE,
    });
    wire().handlers.ended();
    await closed;
    expect(log).toEqual(['connected', 'closeSession', 'end', 'closed']);
    expect(session.state).toBe('closed');
    expect(session.listenerCount('lost')).toBe(0);
  });

  it('ends a closing session after the grace period when the server never answers', async () => {
    const { session, log, handshake } = setup();
    handshake();
    const closed = session.close(1_000);
    vi.advanceTimersByTime(999);
    expect(session.phase).toBe('closing');
    vi.advanceTimersByTime(1);
    await closed;
    expect(log).toEqual(['connected', 'closeSession', 'end', 'closed']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends at once a session closed without a connection, and refuses to reconnect it', async () => {
    const { session, log, wire, handshake, drop } = setup();
    handshake();
    drop();
    await session.close(1_000);
    expect(log).toEqual(['connected', 'suspended', 'end', 'closed']);
    expect(wire().handlers.mayConnect()).toBe(false);
    expect(session.state).toBe('closed');
  });

  it('a session our clock ended keeps trying to close itself until a server answers again', () => {
    // A server that restarts restores the session from its log, however long it was down.
    const { session, log, wire, handshake, loseToClock } = setup();
    handshake();
    loseToClock();
    expect(session.state).toBe('lost');
    vi.advanceTimersByTime(10 * TIMEOUT);
    expect(wire().handlers.mayConnect()).toBe(true); // it keeps trying, to close itself
    expect(vi.getTimerCount()).toBe(0);
    handshake(); // the restored session: closed on the server, within a session timeout
    expect(log).toEqual(['connected', 'suspended', 'lost connection-lost', 'closeSession']);
    vi.advanceTimersByTime(TIMEOUT);
    expect(log.slice(4)).toEqual(['end', 'closed']);
    expect(session.state).toBe('lost');
    expect(session.phase).toBe('lost-closed');
  });

  it('a session our clock ended has a session timeout once the owner reaches a server again', () => {
    // The server expired it already, or answers it late: it ends within that time anyway.
    const { session, log, wire, handshake, loseToClock } = setup();
    handshake();
    loseToClock();
    session.serverReachable();
    vi.advanceTimersByTime(TIMEOUT - 1);
    expect(wire().handlers.mayConnect()).toBe(true);
    vi.advanceTimersByTime(1);
    expect(log).toEqual(['connected', 'suspended', 'lost connection-lost', 'end', 'closed']);
  });

  it('a lost session whose close was cut with its connection sends it again, by the same end', () => {
    const { session, log, wire, handshake, loseToClock } = setup();
    handshake();
    loseToClock();
    handshake(); // the close is written, then its connection reset before the server read it
    vi.advanceTimersByTime(TIMEOUT / 2);
    expect(wire().handlers.mayConnect()).toBe(true); // the wire connects again for it
    handshake();
    expect(log).toEqual([
      'connected',
      'suspended',
      'lost connection-lost',
      'closeSession',
      'closeSession',
    ]);
    vi.advanceTimersByTime(TIMEOUT / 2 - 1);
    expect(session.phase).toBe('lost');
    vi.advanceTimersByTime(1); // the end's deadline is the first handshake's
    expect(log.slice(-2)).toEqual(['end', 'closed']);
  });

  it('a flapping connection never moves the end of a lost session later', () => {
    // Each reconnect, its own or its owner's next session's, comes after the first answer.
    const { session, log, handshake, drop, loseToClock } = setup();
    handshake();
    loseToClock();
    session.serverReachable();
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(TIMEOUT / 5);
      handshake();
      drop();
      session.serverReachable();
    }
    vi.advanceTimersByTime(TIMEOUT / 5 - 1);
    expect(session.phase).toBe('lost');
    vi.advanceTimersByTime(1);
    expect(session.phase).toBe('lost-closed');
    expect(log.slice(-2)).toEqual(['end', 'closed']);
  });

  it('a session the server expired has a session timeout to close itself, then ends', () => {
    const { session, log, wire, handshake, drop } = setup();
    handshake();
    drop();
    wire().handlers.expired(); // the next handshake's answer: timeout 0
    expect(session.state).toBe('lost');
    vi.advanceTimersByTime(TIMEOUT);
    expect(log).toEqual(['connected', 'suspended', 'lost session-expired', 'end', 'closed']);
  });

  it("the owner's close of a lost session without a connection ends it at once", async () => {
    const { session, log, handshake, loseToClock } = setup();
    handshake();
    loseToClock();
    let ended = false;
    void session.close(1_000).then(() => (ended = true));
    await Promise.resolve();
    expect(ended).toBe(true);
    expect(log).toEqual(['connected', 'suspended', 'lost connection-lost', 'end', 'closed']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the owner's close of a lost session closing on the server waits for it, shortened", async () => {
    const { session, log, wire, handshake } = setup();
    handshake();
    // Stalled past the session timeout with the socket up: lost, and closed on that socket.
    vi.setSystemTime(Date.now() + TIMEOUT + 1);
    session.checkLiveness();
    expect(log).toEqual(['connected', 'lost connection-lost', 'closeSession']);
    expect(wire().connected).toBe(false); // the close is on the wire, the server not done yet
    const closed = session.close(1_000);
    vi.advanceTimersByTime(999);
    expect(session.phase).toBe('lost');
    vi.advanceTimersByTime(1);
    await closed;
    expect(log.slice(3)).toEqual(['end', 'closed']);
  });

  it("the owner's close of a lost session sends its close again, within that grace, if cut", async () => {
    const { session, log, wire, handshake, drop } = setup();
    handshake();
    vi.setSystemTime(Date.now() + TIMEOUT + 1);
    session.checkLiveness(); // lost, and closed on the socket still up
    const closed = session.close(1_000);
    vi.advanceTimersByTime(500);
    drop(); // the close's connection reset before its answer: the wire connects again for it
    expect(wire().handlers.mayConnect()).toBe(true);
    handshake();
    expect(log).toEqual(['connected', 'lost connection-lost', 'closeSession', 'closeSession']);
    vi.advanceTimersByTime(499);
    expect(session.phase).toBe('lost');
    vi.advanceTimersByTime(1); // the owner's grace, from its close
    await closed;
    expect(log.slice(4)).toEqual(['end', 'closed']);
  });

  it('a loss while closing is reported, and the close under way ends it', async () => {
    const { session, log, handshake } = setup();
    handshake();
    const closed = session.close(3 * TIMEOUT);
    // No answer: our clock drops the silent socket, then ends the session meanwhile.
    vi.advanceTimersByTime(TIMEOUT + 500);
    expect(session.state).toBe('lost');
    vi.advanceTimersByTime(2 * TIMEOUT);
    await closed;
    expect(log).toEqual([
      'connected',
      'closeSession',
      'dropSocket',
      'lost connection-lost',
      'end',
      'closed',
    ]);
    expect(session.state).toBe('lost');
  });

  it('ends once only, whatever ends it, and reports nothing after', async () => {
    const { session, log, wire, handshake } = setup();
    handshake();
    const closed = session.close(1_000);
    wire().handlers.ended();
    wire().handlers.ended();
    vi.advanceTimersByTime(5_000);
    wire().handlers.expired();
    handshake();
    await Promise.all([closed, session.close(1_000)]);
    expect(log).toEqual(['connected', 'closeSession', 'end', 'closed']);
  });

  it('takes requests while suspended, and refuses them from the close or the loss on', async () => {
    const suspended = setup();
    suspended.handshake();
    suspended.drop();
    void suspended.session.create('/a', null, 0).catch(() => undefined);
    expect(suspended.wire().requests).toHaveLength(1);
    const lost = setup();
    lost.wire().handlers.expired();
    await expect(lost.session.create('/a', null, 0)).rejects.toMatchObject({
      code: ZkCode.SESSION_GONE,
    });
    expect(lost.wire().requests).toHaveLength(0);
    await Promise.all([suspended.session.close(1_000), lost.session.close(1_000)]);
  });

  it('leaves no timer once closed with a request still under way', async () => {
    const { session, handshake, drop, wire } = setup();
    handshake();
    drop();
    const request = session.getData('/a').catch((err: unknown) => err);
    expect(wire().requests).toHaveLength(1);
    await session.close(1_000);
    await expect(request).resolves.toMatchObject({ code: ZkCode.CONNECTION_LOSS });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('provenAlive is a plain read; checkProvenAlive applies the clock when it is false', async () => {
    const { session, log, wire, handshake } = setup();
    handshake();
    expect(session.provenAlive).toBe(true);
    vi.setSystemTime(Date.now() + TIMEOUT + 1); // a process that just woke up
    const timers = vi.getTimerCount();
    expect(session.provenAlive).toBe(false);
    await ticks();
    expect(vi.getTimerCount()).toBe(timers);
    expect(log).toEqual(['connected']);
    expect(session.checkProvenAlive()).toBe(false);
    expect(log).toEqual(['connected']); // right after the call, not in it
    await ticks();
    expect(log).toEqual(['connected', 'lost connection-lost', 'closeSession']);
    const closed = session.close(); // waits for the close on the connection
    wire().handlers.ended(); // the server closed the session and its socket
    await closed;
  });

  it('moves only along the table: an ended session stays ended', () => {
    const ended: Phase[] = ['closed', 'lost-closed'];
    for (const phase of ended) expect(TRANSITIONS[phase]).toEqual([]);
    expect(TRANSITIONS.lost).toEqual(['lost-closed']);
    for (const [from, to] of Object.entries(TRANSITIONS)) {
      if (from !== 'connecting') expect(to).not.toContain('connecting');
    }
  });
});

/** Pure logic of the liveness clock, driven with explicit times (no timers started). */
describe('SessionClock', () => {
  const TIMEOUT = 3_000;
  /** The clock, and what it asked for so far: 'stall' and its verdicts, in order. */
  const setup = () => {
    const calls: string[] = [];
    const clock = new SessionClock(TIMEOUT);
    const tick = (now: number): void => {
      const { stalled, verdict } = clock.tick(now);
      if (stalled) calls.push('stall');
      if (verdict) calls.push(verdict);
    };
    const heard = (now: number): void => {
      if (clock.heard(now)) calls.push('stall');
    };
    const t0 = Date.now();
    heard(t0);
    clock.connected(TIMEOUT);
    return { clock, calls, t0, tick, heard };
  };

  it('declares the session lost at once when a connected socket was silent for a whole timeout', () => {
    // A process that was paused (SIGSTOP) longer than the session timeout and just woke up: the
    // socket still reads connected, but the server has expired the session by now.
    const { calls, t0, tick } = setup();
    tick(t0 + TIMEOUT + 1);
    expect(calls).toContain('expired');
  });

  it('drops a connected socket silent past 2/3 of the timeout (half-open), without loss', () => {
    const { calls, t0, tick } = setup();
    for (let t = t0 + 250; t <= t0 + 2_400; t += 250) tick(t);
    expect(calls.filter((c) => c !== 'quiet')).toEqual(['silent']);
  });

  it('asks the server once no answer came for half the timeout (notifications keep pings away)', () => {
    const { calls, t0, tick, heard } = setup();
    for (let t = t0 + 250; t < t0 + TIMEOUT / 2; t += 250) tick(t);
    expect(calls).toEqual([]);
    tick(t0 + TIMEOUT / 2 + 10);
    expect(calls).toEqual(['quiet']);
    heard(t0 + TIMEOUT / 2 + 20); // its answer
    tick(t0 + TIMEOUT / 2 + 30);
    expect(calls).toEqual(['quiet']);
  });

  it('does not count data read right after a stall as news, until a later request is answered', () => {
    const { clock, calls, t0, heard } = setup();
    const woke = t0 + 2_500; // nothing ran for 2.5 s: the data may have waited in the socket
    heard(woke);
    expect(calls).toEqual(['stall']);
    expect(clock.withinSafeWindow(woke)).toBe(false);
    heard(woke + 10);
    expect(clock.withinSafeWindow(woke + 10)).toBe(false);
    clock.confirmed(woke - 100); // a reply to a request sent before the stall ended: not proof
    expect(clock.stale).toBe(true);
    clock.confirmed(woke + 5); // a reply to a request sent after it
    expect(clock.stale).toBe(false);
    expect(clock.withinSafeWindow(woke + 20)).toBe(true);
  });

  describe('the negotiated timeout', () => {
    it('never runs on one longer than asked for: the loss is told on the asked timeout', () => {
      // 2,359,296 ms: a "negotiated" timeout read through the bytes of another frame.
      const { clock, calls, t0, tick } = setup();
      expect(clock.connected(2_359_296)).toBe(true);
      expect(clock.safeWindowMs).toBe(2_000);
      tick(t0 + TIMEOUT + 1);
      expect(calls).toContain('expired');
    });

    it('runs on a shorter one, and on the asked one again when a later one is longer', () => {
      const { clock } = setup();
      expect(clock.connected(1_500)).toBe(true);
      expect(clock.safeWindowMs).toBe(1_000);
      expect(clock.connected(9_000)).toBe(true);
      expect(clock.safeWindowMs).toBe(2_000);
    });

    it('ends the session on one that is not positive', () => {
      for (const negotiated of [0, -1, -6_000, Number.NaN]) {
        const { clock } = setup();
        expect(clock.connected(negotiated)).toBe(false);
        expect(clock.safeWindowMs).toBe(2_000);
      }
    });
  });
});

describe('RequestDeadlines', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('expires each request once its own timeout has passed, oldest first, with one timer', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    vi.advanceTimersByTime(400);
    deadlines.add(() => expired.push('b'));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(599);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    vi.advanceTimersByTime(399);
    expect(expired).toEqual(['a']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never expires a settled request, and stops once nothing is pending', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    const a = deadlines.add(() => expired.push('a'));
    vi.advanceTimersByTime(500);
    const b = deadlines.add(() => expired.push('b'));
    deadlines.settle(a);
    vi.advanceTimersByTime(500);
    expect(expired).toEqual([]);
    expect(vi.getTimerCount()).toBe(1); // re-armed for b
    deadlines.settle(b);
    deadlines.idle();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(expired).toEqual([]);
  });

  it('keeps its timer while a request is pending when idle() is asked', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    deadlines.idle();
    vi.advanceTimersByTime(1000);
    expect(expired).toEqual(['a']);
  });
});

describe('validatePath', () => {
  /** What validatePath throws for `path` (an AssertionError's message), or 'ok'. */
  const verdict = (path: unknown): string => {
    try {
      validatePath(path as string);
      return 'ok';
    } catch (err) {
      expect(err).toBeInstanceOf(AssertionError);
      return (err as Error).message;
    }
  };

  it('takes absolute paths without empty, "." or ".." segments', () => {
    for (const path of ['/', '/a', '/locks/order:42', '/a/.b/..c/d.', '/.../x', '/a/b..']) {
      expect({ path, verdict: verdict(path) }).toEqual({ path, verdict: 'ok' });
    }
  });

  it('refuses every other shape with the first rule it breaks, in order', () => {
    const cases: [unknown, string][] = [
      ['', 'Node path must be a non-empty string.'],
      [undefined, 'Node path must be a non-empty string.'],
      [42, 'Node path must be a non-empty string.'],
      ['a/b', 'Node path must start with / character.'],
      ['//', 'Node path must not end with / character.'],
      ['/a/', 'Node path must not end with / character.'],
      ['/a/./b/', 'Node path must not end with / character.'],
      ['/a//b', 'Node path must not contain empty node name.'],
      ['/./a//b', 'Node path must not contain empty node name.'],
      ['/a/../b//c', 'Node path must not contain empty node name.'],
      ['/.', 'Node path must not contain relative path(s).'],
      ['/..', 'Node path must not contain relative path(s).'],
      ['/a/./b', 'Node path must not contain relative path(s).'],
      ['/a/..', 'Node path must not contain relative path(s).'],
    ];
    for (const [path, message] of cases) {
      expect({ path, verdict: verdict(path) }).toEqual({ path, verdict: message });
    }
  });
});

describe('RoundTrips', () => {
  it('knows nothing before a first answer', () => {
    expect(new RoundTrips().timeoutMs).toBeUndefined();
  });

  it('starts at three times the first round trip (RFC 6298)', () => {
    const trips = new RoundTrips();
    trips.observe(10);
    expect(trips.timeoutMs).toBe(30);
  });

  it('settles near a steady round trip, and rises with a slower one', () => {
    const trips = new RoundTrips();
    for (let i = 0; i < 100; i++) trips.observe(4);
    expect(trips.timeoutMs).toBeCloseTo(4, 3);
    trips.observe(40);
    expect(trips.timeoutMs!).toBeGreaterThan(40);
  });

  it('ignores a sample that is not a duration', () => {
    const trips = new RoundTrips();
    trips.observe(Number.NaN);
    trips.observe(-1);
    expect(trips.timeoutMs).toBeUndefined();
  });
});
