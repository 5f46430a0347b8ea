import { vi } from 'vitest';
import { LifecycleEffects, Phase, SessionLifecycle, TRANSITIONS } from './session-lifecycle';

/** The state machine alone, with a fake rest of the session that records what it was asked. */
function setup(connected = true) {
  const calls: string[] = [];
  const socket = { connected };
  /** The phases the lifecycle was in when it told the session to refuse requests. */
  const refused: Phase[] = [];
  const effects: LifecycleEffects = {
    emit: (event: string, reason?: unknown) =>
      void calls.push(reason ? `emit ${event} ${reason}` : `emit ${event}`),
    socketConnected: () => socket.connected,
    refuseRequests: () => void refused.push(lifecycle.phase),
    closeOnServer: () => void calls.push('closeOnServer'),
    release: () => void calls.push('release'),
    forget: () => void calls.push('forget'),
  };
  const lifecycle = new SessionLifecycle(effects);
  return { lifecycle, calls, socket, refused };
}

const ENDED = ['release', 'emit closed', 'forget'];

describe('SessionLifecycle', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('reports connected, suspended and reconnected along the table', () => {
    const { lifecycle, calls } = setup();
    expect(lifecycle.state).toBe('connecting');
    lifecycle.disconnected(); // before the first session: nothing to report
    lifecycle.connected();
    lifecycle.disconnected();
    lifecycle.connected();
    expect(calls).toEqual(['emit connected', 'emit suspended', 'emit reconnected']);
    expect(lifecycle.state).toBe('connected');
  });

  it('closes a connected session on the server and ends once its socket closes', async () => {
    const { lifecycle, calls } = setup();
    lifecycle.connected();
    const closed = lifecycle.close(1_000);
    expect(lifecycle.phase).toBe('closing');
    expect(lifecycle.state).toBe('connected'); // reported as it was until it has ended
    expect(lifecycle.live).toBe(false);
    lifecycle.socketClosedForGood();
    await closed;
    expect(calls).toEqual(['emit connected', 'closeOnServer', ...ENDED]);
    expect(lifecycle.state).toBe('closed');
  });

  it('ends a closing session after the grace period when the server never answers', async () => {
    const { lifecycle, calls } = setup();
    lifecycle.connected();
    const closed = lifecycle.close(1_000);
    vi.advanceTimersByTime(999);
    expect(lifecycle.ended).toBe(false);
    vi.advanceTimersByTime(1);
    await closed;
    expect(calls).toEqual(['emit connected', 'closeOnServer', ...ENDED]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends at once a session closed without a connection, and refuses to reconnect it', async () => {
    const { lifecycle, calls } = setup(false);
    lifecycle.connected();
    lifecycle.disconnected();
    await lifecycle.close(1_000);
    expect(calls).toEqual(['emit connected', 'emit suspended', ...ENDED]);
    expect(lifecycle.mayConnect()).toBe(false);
    expect(lifecycle.state).toBe('closed');
  });

  it('a lost session closes itself in the background: on the server once a connection comes', () => {
    const { lifecycle, calls, socket } = setup(false);
    lifecycle.connected();
    lifecycle.lose('connection-lost', 30_000);
    expect(lifecycle.state).toBe('lost');
    expect(lifecycle.mayConnect()).toBe(true); // it keeps trying, to close itself
    socket.connected = true;
    lifecycle.socketConnected();
    lifecycle.socketClosedForGood();
    expect(calls).toEqual([
      'emit connected',
      'emit lost connection-lost',
      'closeOnServer',
      ...ENDED,
    ]);
    expect(lifecycle.state).toBe('lost');
    expect(lifecycle.phase).toBe('lost-closed');
  });

  it('a lost session without a connection gives up after its grace', () => {
    const { lifecycle, calls } = setup(false);
    lifecycle.connected();
    lifecycle.lose('connection-lost', 30_000);
    vi.advanceTimersByTime(30_000);
    expect(calls).toEqual(['emit connected', 'emit lost connection-lost', ...ENDED]);
    expect(lifecycle.mayConnect()).toBe(false);
  });

  it('a session our clock ended keeps trying to close itself until a server answers again', () => {
    // A server that restarts restores the session from its log, however long it was down.
    const { lifecycle, calls, socket } = setup(false);
    lifecycle.connected();
    lifecycle.lose('connection-lost', 30_000, true);
    vi.advanceTimersByTime(10 * 30_000);
    expect(lifecycle.mayConnect()).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    socket.connected = true;
    lifecycle.socketConnected(); // the restored session: closed on the server, within the grace
    expect(calls).toEqual(['emit connected', 'emit lost connection-lost', 'closeOnServer']);
    vi.advanceTimersByTime(30_000);
    expect(calls).toEqual([
      'emit connected',
      'emit lost connection-lost',
      'closeOnServer',
      ...ENDED,
    ]);
  });

  it('a session our clock ended gets its grace once the owner reaches a server again', () => {
    // The server expired it already, or answers it late: it ends within the grace anyway.
    const { lifecycle, calls } = setup(false);
    lifecycle.connected();
    lifecycle.lose('connection-lost', 30_000, true);
    lifecycle.reachable();
    vi.advanceTimersByTime(29_999);
    expect(lifecycle.mayConnect()).toBe(true);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual(['emit connected', 'emit lost connection-lost', ...ENDED]);
  });

  it("the owner's close of a lost session without a connection ends it at once", async () => {
    // ZkConnection.close() used to wait for it until its grace (a session timeout) ran out.
    const { lifecycle, calls } = setup(false);
    lifecycle.connected();
    lifecycle.lose('connection-lost', 30_000);
    let ended = false;
    void lifecycle.close(1_000).then(() => (ended = true));
    await Promise.resolve();
    expect(ended).toBe(true);
    expect(calls).toEqual(['emit connected', 'emit lost connection-lost', ...ENDED]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the owner's close of a lost session closing on the server waits for it, shortened", async () => {
    const { lifecycle, calls } = setup(true);
    lifecycle.connected();
    lifecycle.lose('session-expired', 30_000);
    const closed = lifecycle.close(1_000);
    vi.advanceTimersByTime(1_000);
    await closed;
    expect(calls).toEqual([
      'emit connected',
      'emit lost session-expired',
      'closeOnServer',
      ...ENDED,
    ]);
  });

  it('a loss while closing is reported, and the close under way ends it', async () => {
    const { lifecycle, calls } = setup();
    lifecycle.connected();
    const closed = lifecycle.close(1_000);
    lifecycle.lose('session-expired', 30_000);
    vi.advanceTimersByTime(1_000);
    await closed;
    expect(calls).toEqual([
      'emit connected',
      'closeOnServer',
      'emit lost session-expired',
      ...ENDED,
    ]);
    expect(lifecycle.state).toBe('lost');
  });

  it('ends once only, whatever ends it, and reports nothing after', async () => {
    const { lifecycle, calls } = setup();
    lifecycle.connected();
    const closed = lifecycle.close(1_000);
    lifecycle.socketClosedForGood();
    lifecycle.socketClosedForGood();
    vi.advanceTimersByTime(5_000);
    lifecycle.lose('session-expired', 1_000);
    lifecycle.connected();
    await Promise.all([closed, lifecycle.close(1_000)]);
    expect(calls.filter((c) => c === 'release')).toHaveLength(1);
    expect(calls).toEqual(['emit connected', 'closeOnServer', ...ENDED]);
  });

  it('tells the session to refuse requests once, as it leaves the live phases', async () => {
    const closing = setup();
    closing.lifecycle.connected();
    closing.lifecycle.disconnected();
    expect(closing.refused).toEqual([]);
    const closed = closing.lifecycle.close(1_000);
    closing.lifecycle.lose('connection-lost', 1_000); // a loss while closing: already refusing
    vi.advanceTimersByTime(1_000);
    await closed;
    expect(closing.refused).toEqual(['closing']);
    const lost = setup(false);
    lost.lifecycle.lose('session-expired', 1_000);
    expect(lost.lifecycle.live).toBe(false);
    await lost.lifecycle.close(1_000);
    expect(lost.refused).toEqual(['lost']);
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
