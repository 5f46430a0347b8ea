/**
 * A new ZooKeeper session opened synchronously inside a `withLock` scope (the
 * scope's assertHeld() found the old session lost) must not carry that scope's
 * AsyncLocalStorage context into the new session's socket callbacks. Otherwise a listener
 * called from there (a 'state' listener on RECONNECTED) that takes a lock sees the scope's
 * holds as its own: it would re-enter them, or here fail at once with the scope's LockLostError
 * instead of waiting as the fresh owner it is. The same for a `lost` listener told synchronously
 * by the assertHeld() that noticed the loss.
 */
import { ConnectionState, LockLostError, ZkLockClient } from '../../lib';
import { scaled } from '../support/time-scale';
import { useTestRoot } from './support/core-fixture';
import { eventually, zkConnectFromEnv } from './support/zk-admin';

const SESSION_MS = 2_000;

describe('a session opened inside a withLock scope', () => {
  const zk = useTestRoot('scope-context');
  let locks: ZkLockClient;

  beforeAll(async () => {
    locks = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessionTimeoutMs: SESSION_MS,
    });
  });
  afterAll(() => locks.close());

  /** Blocks this process past the session timeout: the next library call ends the session. */
  const stallPastSession = (): void => {
    const until = Date.now() + SESSION_MS * 1.5;
    while (Date.now() < until) {
      // busy: no timer, no socket read
    }
  };
  const lockFromListener = (path: string): Promise<string> =>
    locks
      .withLock(path, (lock) => `granted ${lock.state}`, { waitTimeoutMs: scaled(30_000) })
      .catch((err: Error) => `failed: ${err.name}`);

  it('does not hand the scope to listeners called from its socket', async () => {
    const path = `${zk.root}/scoped`;
    let fromListener: Promise<string> | undefined;
    const onState = (state: ConnectionState): void => {
      if (state !== 'RECONNECTED' || fromListener) return;
      // Called from the new session's socket: a fresh owner, in no scope of ours.
      fromListener = lockFromListener(path);
    };
    locks.on('state', onState);
    try {
      await locks.withLock(path, async (lock) => {
        // assertHeld() ends the session and opens a new one, synchronously, inside this scope.
        stallPastSession();
        expect(() => lock.assertHeld()).toThrow(LockLostError);
        await eventually('the new session is connected', () => fromListener !== undefined);
      });
      // The listener's lock waited for this scope to leave, then was granted.
      expect(await fromListener).toBe('granted held');
    } finally {
      locks.off('state', onState);
    }
  });

  it('does not hand the scope to a lost listener told by the assertHeld() that noticed', async () => {
    const path = `${zk.root}/lost-listener`;
    let fromListener: Promise<string> | undefined;
    const onLost = ({ path: lost }: { path: string }): void => {
      if (lost === path) fromListener ??= lockFromListener(path);
    };
    locks.on('lost', onLost);
    try {
      await locks.withLock(path, async (lock) => {
        stallPastSession();
        expect(() => lock.assertHeld()).toThrow(LockLostError);
        expect(fromListener).toBeDefined();
      });
      expect(await fromListener).toBe('granted held');
    } finally {
      locks.off('lost', onLost);
    }
  });
});
