/**
 * Expires ONE session of a ZkLockClient on the server while the server and the client's other
 * sessions go on, as Curator's test utility KillSession does: another connection attaches to the
 * session (its id and password) and closes it, so the server ends it and deletes its ephemeral
 * nodes; the owner's next connect is told SESSION_EXPIRED. Reaches into the client (its pool and
 * the session's wire, for its id and password), which only a test may do.
 */
import type { ZkLockClient } from '../../../lib';
import { scaled } from '../../support/time-scale';
import { eventually } from './zk-admin';

interface RawClient {
  connect(): void;
  close(): void;
  once(event: 'connected' | 'expired', listener: () => void): void;
}

interface SessionKey {
  id: Buffer;
  password: Buffer;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const zookeeper = require('node-zookeeper-client') as {
  createClient(
    connectionString: string,
    options: { sessionTimeout: number; sessionId: Buffer; sessionPassword: Buffer },
  ): RawClient;
};

/** The client's session `index` (0 to sessions - 1): its hex id, and its id and password. */
function sessionOf(client: ZkLockClient, index: number): { id: string; key: SessionKey } {
  const session = (client as any).pool.members[index].current;
  return { id: session.id, key: session.wire.sessionCredentials() };
}

/** Attaches to the session with its credentials and closes it; resolves once the close went. */
function attachAndClose(connectionString: string, key: SessionKey): Promise<void> {
  const other = zookeeper.createClient(connectionString, {
    sessionTimeout: 30_000,
    sessionId: key.id,
    sessionPassword: key.password,
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(), scaled(10_000));
    const done = () => {
      clearTimeout(timer);
      other.close();
      // close() sends CLOSE_SESSION and the socket ends on its reply: give it a moment.
      setTimeout(resolve, 200);
    };
    other.once('connected', done);
    other.once('expired', done);
    other.connect();
  });
}

/**
 * Expires session `index` of `client` and resolves with its (old) id once the client has
 * noticed (that session's member has a new session). The owner may re-attach before the close
 * reaches the server (it reconnects at once when the other connection takes its session): then
 * it tries again.
 */
export async function expireSession(
  connectionString: string,
  client: ZkLockClient,
  index: number,
): Promise<string> {
  const { id, key } = sessionOf(client, index);
  await eventually(
    `session ${index} (${id}) is expired and replaced`,
    async () => {
      if (sessionOf(client, index).id !== id) return true;
      await attachAndClose(connectionString, key);
      const deadline = Date.now() + scaled(5_000);
      while (Date.now() < deadline) {
        if (sessionOf(client, index).id !== id) return true;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return false;
    },
    scaled(60_000),
  );
  return id;
}
