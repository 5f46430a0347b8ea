/**
 * Expires ONE session of a ZkLockClient on the server while the server and the client's other
 * sessions go on, as Curator's test utility KillSession does: another connection attaches to the
 * session (its id and password) and closes it, so the server ends it and deletes its ephemeral
 * nodes; the owner's next connect is told SESSION_EXPIRED. Reaches into the client (its pool and
 * the session's wire, for its id and password), which only a test may do.
 */
import { connect } from 'node:net';
import type { ZkLockClient } from '../../../lib';
import { encodeConnect, encodeHeaderOnly, OP } from '../../../lib/core/zookeeper/jute';
import { scaled } from '../../support/time-scale';
import { eventually } from './zk-admin';

interface SessionKey {
  id: Buffer;
  password: Buffer;
}

interface SessionOfClient {
  id: string;
  wire: { sessionCredentials(): SessionKey };
  once(event: 'reconnected', listener: () => void): void;
  off(event: 'reconnected', listener: () => void): void;
}

/** The client's session `index` (0 to sessions - 1), as its pool holds it now. */
function sessionOf(client: ZkLockClient, index: number): SessionOfClient {
  return (client as any).pool.members[index].current;
}

/**
 * Attaches to the session with its credentials and closes it, both in one write: the server
 * reads the close right after the handshake that moved the session here, before the owner (whose
 * connection that handshake dropped) is back with its own. Resolves once the server has closed
 * this connection (it does after the close, or at once for a session already gone).
 */
function attachAndClose(connectionString: string, key: SessionKey): Promise<void> {
  const [host, port] = connectionString.split('/')[0].split(',')[0].split(':');
  const socket = connect(Number(port), host);
  socket.setNoDelay(true);
  socket.on('error', () => undefined); // the close below says it is over
  socket.resume(); // the replies are not read: the close of the connection is the answer
  socket.write(
    Buffer.concat([
      encodeConnect({
        lastZxidSeen: Buffer.alloc(8),
        timeoutMs: 30_000,
        sessionId: key.id,
        password: key.password,
      }),
      encodeHeaderOnly(1, OP.CLOSE_SESSION),
    ]),
  );
  return new Promise((resolve) => {
    const timer = setTimeout(() => socket.destroy(), scaled(10_000));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Expires session `index` of `client` and resolves with its (old) id once the client has
 * noticed (that session's member has a new session). The owner may take its session back before
 * the close reaches the server (it reconnects at once when the other connection takes it): then
 * the session stays, the owner says `reconnected`, and it tries again.
 */
export async function expireSession(
  connectionString: string,
  client: ZkLockClient,
  index: number,
): Promise<string> {
  const session = sessionOf(client, index);
  const { id } = session;
  const key = session.wire.sessionCredentials();
  await eventually(
    `session ${index} (${id}) is expired and replaced`,
    async () => {
      if (sessionOf(client, index).id !== id) return true;
      let reattached = false;
      const onReconnected = (): void => void (reattached = true);
      session.once('reconnected', onReconnected);
      try {
        await attachAndClose(connectionString, key);
        const deadline = Date.now() + scaled(5_000);
        while (Date.now() < deadline && !reattached) {
          if (sessionOf(client, index).id !== id) return true;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return sessionOf(client, index).id !== id;
      } finally {
        session.off('reconnected', onReconnected);
      }
    },
    scaled(60_000),
  );
  return id;
}
