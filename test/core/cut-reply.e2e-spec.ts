/**
 * A reply cut mid-frame by a connection reset, with the run's ZooKeeper up all along: A holds
 * (one session of 6 s, through a TCP proxy), B waits in another process, and the proxy resets
 * A's connection after the first bytes of the next frame the server sends it. The bytes of that
 * frame belong to the socket that died: A's next connection must read its own ConnectResponse,
 * resume the same session and keep it alive. Whatever happens, A is told lost (or assertHeld()
 * fails) no later than B is granted: never both holding.
 */
import { LockHandle, ZkLockClient } from '../../lib';
import { LockAgent } from './support/agents';
import { useTestRoot } from './support/core-fixture';
import { TcpProxy } from './support/tcp-proxy';
import { clientPortOf, eventually, zkConnectFromEnv } from './support/zk-admin';
import { scaled } from '../support/time-scale';

const SESSION_MS = 6_000;

/** Whether the lock is still provably A's, by its own rule. */
const assertHeldPasses = (lock: LockHandle): boolean => {
  try {
    lock.assertHeld();
    return true;
  } catch {
    return false;
  }
};

describe('a reply cut mid-frame by a connection reset', () => {
  const fixture = useTestRoot('cut-reply');

  // A reply of 93 bytes (a getData of a node holding 1 byte, read by inspect()) cut inside its
  // xid; read through by the next ConnectResponses, it would give both holding. And the
  // next frame after an inspect() (or a ping reply) cut after 19 bytes: a false loss. The two run
  // at once (each its own proxy, clients and path): each waits two session timeouts.
  it.concurrent.for([
    { frame: 'a 93-byte getData reply', bytes: 6, frameBytes: 93 },
    { frame: 'the next frame', bytes: 19, frameBytes: undefined },
  ])(
    '$frame cut after $bytes bytes: A keeps its session and lock, B is granted only after A released',
    async ({ bytes, frameBytes }, { onTestFinished }) => {
      // Closed after the test, last opened first.
      const proxy = await TcpProxy.start(clientPortOf(zkConnectFromEnv()));
      onTestFinished(() => proxy.close());
      const path = `${fixture.root}/cut-${bytes}`;
      const a = await ZkLockClient.connect({
        connectionString: proxy.connectionString,
        sessionTimeoutMs: SESSION_MS,
        sessions: 1,
      });
      onTestFinished(() => a.close());
      const lock = await a.acquire(path);
      let toldLost = false;
      lock.on('lost', () => (toldLost = true));
      const session = a.sessionId;
      const b = await LockAgent.start({ sessionTimeoutMs: SESSION_MS });
      onTestFinished(() => b.close());
      let bGranted = false;
      let aHeldWhenBGranted: boolean | undefined;
      const bToken = b.acquire(path).then((token) => {
        bGranted = true;
        aHeldWhenBGranted = !toldLost && assertHeldPasses(lock);
        return token;
      });
      bToken.catch(() => undefined); // awaited below; a failed step above must not leave it unhandled
      await eventually('B waits', async () => (await fixture.admin.children(path)).length === 2);

      // A node of 1 byte: the reply to its getData is 93 bytes (20 of header, 4 + 1 of data, a
      // Stat of 68).
      const small = `${fixture.root}/small-${bytes}-${frameBytes}`;
      await fixture.admin.create(small, '', 'persistent');
      await fixture.admin.create(`${small}/x-lock-0000000001`, '1', 'persistent');
      const cut = proxy.cutNextFrameAfter(bytes, frameBytes);
      const asked = frameBytes ? a.inspect(small) : a.inspect(path);
      asked.catch(() => undefined);
      await cut;
      const cutAt = Date.now();
      await asked.catch(() => undefined);
      // By two session timeouts after the cut, a session the server was not pinged for has
      // expired: A's session answering then is alive on the server, with A's node in it.
      const aliveOnServer = async (): Promise<boolean> => {
        if (Date.now() - cutAt < 2 * SESSION_MS) return false;
        const seen = await a.inspect(path).catch(() => undefined);
        return seen?.holder?.sessionId === session && a.sessionId === session;
      };
      await eventually(
        "B granted, A told lost, or A's session alive on the server two session timeouts on",
        async () => bGranted || toldLost || (await aliveOnServer()),
        2 * SESSION_MS + scaled(30_000),
      );
      expect({ bGranted, toldLost, aHeldWhenBGranted, held: assertHeldPasses(lock) }).toEqual({
        bGranted: false,
        toldLost: false,
        aHeldWhenBGranted: undefined,
        held: true,
      });

      await lock.release();
      await bToken;
      expect(aHeldWhenBGranted).toBe(false);
      await b.release(path);
    },
  );
});
