import type { ConnectionState } from '../types';
import { clientState } from './session-pool';

/** The client's state from its sessions' (docs/design.md "Sessions as a pool"). */
describe('clientState', () => {
  /** The client states a run of session changes gives, each reported when it changes. */
  const run = (sessions: number, changes: [number, ConnectionState][]): ConnectionState[] => {
    const states: ConnectionState[] = new Array(sessions).fill('CONNECTED');
    let current = clientState(states, false);
    const seen = [current];
    for (const [index, state] of changes) {
      states[index] = state;
      const next = clientState(states, true);
      if (next !== current) seen.push((current = next));
    }
    return seen;
  };

  it('is CONNECTED once every session is', () => {
    expect(clientState(['CONNECTED', 'CONNECTED', 'CONNECTED'], false)).toBe('CONNECTED');
  });

  it("is one session's own states with one session (as before sessions were pooled)", () => {
    const changes: [number, ConnectionState][] = [
      [0, 'SUSPENDED'],
      [0, 'RECONNECTED'],
      [0, 'SUSPENDED'],
      [0, 'LOST'],
      [0, 'RECONNECTED'],
    ];
    expect(run(1, changes)).toEqual(['CONNECTED', ...changes.map(([, state]) => state)]);
  });

  it('is SUSPENDED while any session is, and RECONNECTED only once all are back', () => {
    expect(
      run(3, [
        [1, 'SUSPENDED'],
        [2, 'SUSPENDED'],
        [1, 'RECONNECTED'], // 2 is still suspended
        [2, 'RECONNECTED'],
      ]),
    ).toEqual(['CONNECTED', 'SUSPENDED', 'RECONNECTED']);
  });

  it('is LOST while any session is lost, before SUSPENDED', () => {
    expect(
      run(3, [
        [0, 'SUSPENDED'],
        [1, 'SUSPENDED'],
        [1, 'LOST'],
        [0, 'RECONNECTED'], // 1 is still lost
        [1, 'RECONNECTED'], // its new session
      ]),
    ).toEqual(['CONNECTED', 'SUSPENDED', 'LOST', 'RECONNECTED']);
  });
});
