import type { ConnectionState } from '../types';
import { clientState, recipePathOf, sessionIndexOf } from './zk-connection';

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

/** Which session of a pool a lock path uses (docs/design.md "Sessions as a pool"). */
describe('sessionIndexOf', () => {
  it('is stable: the same path always gets the same session, here and in any process', () => {
    // FNV-1a of the UTF-8 bytes, as computed by another implementation (Python) of it.
    const paths = ['/a', '/b', '/locks/order:42', '/ünïcode/路径'];
    expect(paths.map((p) => sessionIndexOf(p, 4))).toEqual([1, 0, 3, 0]);
    expect(paths.map((p) => sessionIndexOf(p, 4))).toEqual(paths.map((p) => sessionIndexOf(p, 4)));
  });

  it('hashes the UTF-8 bytes of any path, ASCII or not', () => {
    const fnv1a = (path: string) => {
      let hash = 0x811c9dc5;
      for (const byte of Buffer.from(path, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193);
      return hash >>> 0;
    };
    const paths = ['/app/order:1', '/é', '/app/ü/1', '/日本/x', '/😀', '/~\x7f', '/a\u0080b'];
    for (const path of paths) {
      for (const sessions of [2, 3, 4, 16]) {
        expect(sessionIndexOf(path, sessions)).toBe(fnv1a(path) % sessions);
      }
    }
  });

  it('gives every path session 0 when there is one session', () => {
    for (const path of ['/a', '/b', '/c/locks', '/x/y/z']) expect(sessionIndexOf(path, 1)).toBe(0);
  });

  it('spreads many paths evenly over the sessions', () => {
    for (const sessions of [2, 3, 4, 8]) {
      const counts = new Array<number>(sessions).fill(0);
      const paths = 10_000;
      for (let i = 0; i < paths; i++) counts[sessionIndexOf(`/app/orders/order:${i}`, sessions)]++;
      for (const count of counts) {
        expect(count).toBeGreaterThan((paths / sessions) * 0.9);
        expect(count).toBeLessThan((paths / sessions) * 1.1);
      }
    }
  });

  it("puts a semaphore's locks and leases children on its path's session", () => {
    for (let i = 0; i < 200; i++) {
      const path = `/app/pool-${i}`;
      const index = sessionIndexOf(path, 4);
      expect(sessionIndexOf(`${path}/locks`, 4)).toBe(index);
      expect(sessionIndexOf(`${path}/leases`, 4)).toBe(index);
    }
  });

  it('keys on the recipe path, shared by a mutex, both sides of a read/write lock and an election', () => {
    // They all use the lock path itself: the key is the path, whatever the kind.
    expect(recipePathOf('/app/job')).toBe('/app/job');
    expect(recipePathOf('/app/job/locks')).toBe('/app/job');
    expect(recipePathOf('/app/job/leases')).toBe('/app/job');
    expect(recipePathOf('/app/joblocks')).toBe('/app/joblocks');
    expect(recipePathOf('/locks')).toBe('/locks');
    expect(recipePathOf('/leases')).toBe('/leases');
  });
});
