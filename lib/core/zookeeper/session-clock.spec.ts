import { SessionClock } from './session-clock';

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
