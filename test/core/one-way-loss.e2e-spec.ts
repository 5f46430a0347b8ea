/**
 * With client->server bytes lost (one-way loss, by a TCP proxy), watch
 * notifications keep coming from the server until it expires the session. They prove nothing
 * about whether the server hears us: only answers to our own requests (replies, ping replies)
 * may keep the session clock going. Otherwise the muted holder is granted new locks on
 * notification-only traffic and its `assertHeld()` still passes after the server expired its
 * session and another client took its lock (docs/design.md "What holding means").
 */
import { LockHandle, LockLostError, ZkLockClient } from '../../lib';
import { fourLetterWord } from '../support/zookeeper';
import { scaled } from '../support/time-scale';
import { useTestRoot } from './support/core-fixture';
import { TcpProxy } from './support/tcp-proxy';
import { clientPortOf, eventually, zkConnectFromEnv } from './support/zk-admin';

const SESSION_MS = 6_000;
/** One notification to the muted client this often: well inside its ping interval (2 s). */
const PACE_MS = 700;
/** Paths the muted client waits on: enough notifications to outlast its session. */
const PATHS = 16;

describe('a client whose requests are lost while notifications still arrive', () => {
  const zk = useTestRoot('one-way-loss');
  let proxy: TcpProxy;
  let muted: ZkLockClient;
  let other: ZkLockClient;

  beforeAll(async () => {
    proxy = await TcpProxy.start(clientPortOf(zkConnectFromEnv()));
    muted = await ZkLockClient.connect({
      connectionString: proxy.connectionString,
      sessionTimeoutMs: SESSION_MS,
      sessions: 1, // the server's watches of its one session are read below
    });
    other = await ZkLockClient.connect({
      connectionString: zkConnectFromEnv(),
      sessionTimeoutMs: 20_000,
    });
  });

  afterAll(async () => {
    proxy.passRequests();
    await Promise.all([muted.close(), other.close()]);
    await proxy.close();
  });

  /** Whether the server has a watch of session `sessionId` (hex) on `path` (wchc). */
  const watching = async (sessionId: string, path: string): Promise<boolean> => {
    const text = await fourLetterWord(clientPortOf(zkConnectFromEnv()), 'wchc');
    return text.split(/\n(?=0x)/).some((s) => s.startsWith(`0x${sessionId}\n`) && s.includes(path));
  };

  it('loses its locks by the session-timeout rule while notifications keep arriving', async () => {
    const heldPath = `${zk.root}/held`;
    const held = await muted.acquire(heldPath);
    const theirs = other.acquire(heldPath, { waitTimeoutMs: scaled(60_000) });
    const paths = Array.from({ length: PATHS }, (_, i) => `${zk.root}/q${i}`);
    const blockers = await Promise.all(paths.map((p) => other.acquire(p)));
    const granted: LockHandle[] = [];
    const waits = paths.map((p) =>
      muted.acquire(p, { waitTimeoutMs: scaled(60_000) }).then(
        (lock) => void granted.push(lock),
        () => undefined, // its session was lost before its turn
      ),
    );
    await eventually('the muted client watches the node ahead on every path', async () => {
      const all = await Promise.all(paths.map((p) => watching(muted.sessionId, `${p}/`)));
      return all.every(Boolean) && (await zk.admin.children(heldPath)).length === 2;
    });

    proxy.dropRequests(); // nothing the muted client sends reaches the server from now on
    let next = 0;
    const pacer = setInterval(() => {
      if (next < blockers.length) void blockers[next++].release(); // a notification to `muted`
    }, PACE_MS);
    try {
      const lock = await theirs; // the server expired the muted session: its node went
      expect(next).toBeLessThan(blockers.length); // notifications were still coming meanwhile
      expect(() => held.assertHeld()).toThrow(LockLostError);
      expect(held.state).not.toBe('held');
      // Whatever it was granted after the mute (only within the safe window of its last reply,
      // which came before the mute) is no longer trusted either.
      for (const mine of granted) expect(() => mine.assertHeld()).toThrow(LockLostError);
      await lock.release();
    } finally {
      clearInterval(pacer);
      proxy.passRequests();
      await Promise.all(blockers.map((b) => b.release()));
      await Promise.all(waits);
      await Promise.all(granted.map((g) => g.release()));
    }
  });
});
