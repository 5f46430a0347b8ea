/**
 * close() of a client whose session is already lost returns promptly. The lost session keeps
 * trying to reach ZooKeeper, to close itself there (its nodes go at once if a server comes back),
 * within another session timeout; close() used to wait for that, so a client closed while
 * ZooKeeper was down took up to a whole session timeout more (with a 30 s session, one NestJS
 * app's shutdown came near its test's hook timeout). Its nodes count as gone already: the
 * owner's close ends it at once (docs/design.md "The connection layer").
 */
import { readFileSync } from 'node:fs';
import { ConnectionState, ZkLockClient } from '../../lib';
import { OP } from '../../lib/core/zookeeper/jute';
import { trackOwnResources } from '../support/own-resources';
import { scaled } from '../support/time-scale';
import type { ZkSession } from '../../lib/core/zookeeper/zk-session';
import { fourLetterWord, ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { TcpProxy } from './support/tcp-proxy';
import { clientPortOf, eventually, settlesWithin, testRoot, ZkAdmin } from './support/zk-admin';

describe('close() of a client whose session is lost', () => {
  let server: ZooKeeperServer;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('returns without waiting for the lost session while ZooKeeper is down', async () => {
    // Scaled: on a slow machine, half of it stays far more than ending at once takes there.
    const SESSION_MS = scaled(6_000);
    let closeMs = Infinity;
    const own = await trackOwnResources(async () => {
      const locks = await ZkLockClient.connect({
        connectionString: server.connectionString,
        sessionTimeoutMs: SESSION_MS,
      });
      const states: ConnectionState[] = [];
      locks.on('state', (state: ConnectionState) => states.push(state));
      await server.members[0].stop();
      // Our clock ends the session a session timeout after ZooKeeper was last heard from.
      await eventually(
        'the session is lost',
        () => states.includes('LOST'),
        scaled(4 * SESSION_MS),
      );
      const startedAt = Date.now();
      await locks.close();
      closeMs = Date.now() - startedAt;
      expect(locks.state).toBe('CLOSED');
    });
    // The lost session's background close is given a whole session timeout: half of it is far
    // more than ending at once takes, and far less than what waiting for it took.
    expect(closeMs).toBeLessThan(SESSION_MS / 2);
    expect(await own.leftOpen()).toEqual([]);
  });
});

/**
 * A session our clock ended (no answer for a session timeout, while the server still heard us)
 * closes itself on the server when it reaches one again, so its nodes go at once. The close
 * may be lost with its connection: CLOSE_SESSION written, the connection reset before the
 * server read it. The session used to end there, and its nodes (the lost holder's, and the node
 * of a caller that waited in it) stayed first in line until the server expired it, a session
 * timeout later. It closes itself again on the next connection, within the grace it has left.
 */
describe('a lost session whose close is cut before the server reads it', () => {
  const SESSION_MS = 10_000;
  const root = testRoot('lost-close-cut');
  let server: ZooKeeperServer;
  let proxy: TcpProxy;
  let admin: ZkAdmin;
  const clients: ZkLockClient[] = [];

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    // The server's own account of each session: it logs the ones it expires.
    server = await ZooKeeperServer.start({
      jvmFlags: ['-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.ZooKeeperServer=info'],
    });
    proxy = await TcpProxy.start(clientPortOf(server.connectionString));
    admin = await ZkAdmin.connect(server.connectionString);
  });

  afterAll(async () => {
    admin?.close();
    await Promise.all(clients.map((client) => client.close()));
    await proxy?.close();
    await server?.stop();
  });

  /** Whether the server's log says it expired the session `id` (hex). */
  const expiredByServer = (id: string): boolean =>
    readFileSync(server.members[0].logFile, 'utf8').includes(`Expiring session 0x${id},`);

  it("lets others have its holder's and waiter's nodes without waiting for the server's expiry", async () => {
    const connect = async (connectionString: string): Promise<ZkLockClient> => {
      const client = await ZkLockClient.connect({
        connectionString,
        namespace: root,
        sessionTimeoutMs: SESSION_MS,
        connectTimeoutMs: scaled(60_000),
      });
      clients.push(client);
      return client;
    };
    const a = await connect(proxy.connectionString);
    const b = await connect(server.connectionString);
    const wait = { waitTimeoutMs: scaled(120_000) };
    // A holds p and waits for q behind B; B waits for p behind A.
    const held = await a.acquire('/p');
    const bHoldsQ = await b.acquire('/q');
    const aGetsQ = a.acquire('/q', wait);
    const bGetsP = b.acquire('/p', wait);
    await eventually('both wait', async () => {
      const [p, q] = await Promise.all([admin.children(`${root}/p`), admin.children(`${root}/q`)]);
      return p.length === 2 && q.length === 2;
    });
    const oldSession = a.sessionId;

    // The server still hears A (pings, then ConnectRequests), A hears nothing: A's clock ends
    // the session while the server keeps it, and A's waiting caller waits for a new session.
    proxy.muteReplies();
    await new Promise((resolve) => held.signal.addEventListener('abort', resolve));
    expect(held.signal.reason).toMatchObject({ reason: 'connection-lost' });
    await bHoldsQ.release(); // q's first node is now the one A waited with in its old session

    // A reaches the server again; the lost session's CLOSE_SESSION is cut on its way.
    const cut = proxy.cutAtRequest(OP.CLOSE_SESSION);
    proxy.unmuteReplies();
    proxy.block(); // the attempts under way lost their answers: they start again at once
    proxy.unblock();
    await cut;
    const cutAt = Date.now();
    expect(expiredByServer(oldSession)).toBe(false);

    // Both are granted on nodes the old session no longer holds, and the server never had to
    // expire it: it was closed by its client, not timed out.
    const [bHoldsP, aHoldsQ] = await Promise.all([bGetsP, aGetsQ]);
    expect(expiredByServer(oldSession)).toBe(false);
    process.stdout.write(
      `[lost-close-cut] close cut -> both granted: ${Date.now() - cutAt} ms ` +
        `(session timeout ${SESSION_MS} ms)\n`,
    );
    expect(a.sessionId).not.toBe(oldSession);
    await Promise.all([bHoldsP.release(), aHoldsQ.release(), held.release()]);
  });

  /** Whether the server still tracks the session `id` (hex): `dump` lists every session. */
  const serverHolds = async (id: string): Promise<boolean> =>
    (await fourLetterWord(clientPortOf(server.connectionString), 'dump')).includes(`0x${id}`);

  // The user's close() of a client whose lost session has its CLOSE_SESSION on a connection, not
  // answered yet: the lost session waits for the server to close it (within close()'s bound), so
  // its nodes go now, not when the server expires it. Ending it at once would reset the
  // connection under the close, which the server may never read.
  it("waits, when the client is closed, for a lost session's close already on a connection", async () => {
    // A proxy of its own: the clients of the test above go on through theirs.
    const proxy = await TcpProxy.start(clientPortOf(server.connectionString));
    let lost!: ZkSession;
    let oldSession = '';
    const own = await trackOwnResources(async () => {
      const a = await ZkLockClient.connect({
        connectionString: proxy.connectionString,
        namespace: root,
        sessionTimeoutMs: SESSION_MS,
        connectTimeoutMs: scaled(60_000),
      });
      const held = await a.acquire('/r');
      const member = (a as any).pool.members[0] as { current: ZkSession };
      lost = member.current;
      oldSession = a.sessionId;
      // A's clock ends the session while the server keeps it (as above).
      proxy.muteReplies();
      await new Promise((resolve) => held.signal.addEventListener('abort', resolve));
      // A reaches the server again; the lost session's CLOSE_SESSION is held on its way.
      const closeHeld = proxy.holdAtRequest(OP.CLOSE_SESSION);
      proxy.unmuteReplies();
      proxy.block();
      proxy.unblock();
      await closeHeld;
      await eventually('A has a new session', () => member.current.state === 'connected');

      const closed = a.close();
      // The client's close closes its live session and its lost one together.
      await eventually(
        "A's close reached its sessions",
        () => member.current.phase !== 'connected',
      );
      expect(lost.phase).toBe('lost'); // its close is on the connection: it waits for the server
      expect(await serverHolds(oldSession)).toBe(true);
      proxy.releaseRequests();
      await settlesWithin('the client closes', closed);
    }).finally(() => proxy.close());
    expect(lost.phase).toBe('lost-closed');
    // Closed by its client, not timed out by the server.
    expect(await serverHolds(oldSession)).toBe(false);
    expect(expiredByServer(oldSession)).toBe(false);
    expect(await own.leftOpen()).toEqual([]);
  });
});
