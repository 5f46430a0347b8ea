// Owns a client's wiring to its sessions and its end: the recipes' session events, their queue
// contexts, and the shutdown close() runs. Off the acquire's way.
import type { EventEmitter } from 'node:events';
import { ClientClosedError } from '../errors';
import type { LockQueues } from '../engine/lock-queues';
import type { QueueContext } from '../engine/waiter-queue';
import type { ElectionRegistry } from '../recipes/leader-latch';
import type { ParentReaper } from '../engine/parent-reaper';
import type { SemaphoreRecipe } from '../recipes/semaphore';
import type { ConnectionState, SessionInfo } from '../types';
import type { SessionPool } from '../zookeeper/zk-connection';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';

/** @internal What a client is made of, for its wiring and its shutdown. */
export interface ClientParts {
  readonly pool: SessionPool;
  readonly reaper: ParentReaper;
  readonly queues: LockQueues;
  readonly semaphores: SemaphoreRecipe;
  readonly elections: ElectionRegistry;
}

/**
 * @internal What the lock queues of one session get from the client: its connection, node data,
 * limit and the client's events (a loss names the session).
 */
export function queueContext(
  client: EventEmitter,
  nodeData: Buffer,
  maxNodesPerPath: number,
  connection: ZkConnection,
  index: number,
): QueueContext {
  return {
    connection,
    nodeData,
    maxNodesPerPath,
    watchesLoss: () => client.listenerCount('lost') > 0,
    released: (lock) => {
      if (client.listenerCount('released') === 0) return;
      client.emit('released', { path: lock.path, holdMs: Date.now() - lock.acquiredAt });
    },
    lost: (lock, error) => {
      const session = { index, id: lock.contender.session?.id ?? '', state: connection.state };
      client.emit('lost', { path: lock.path, error, session });
    },
  };
}

/** @internal The pool's events as the client's, and each member's session events to the recipes. */
export function watchSessions(client: EventEmitter, parts: ClientParts): void {
  const { pool, queues, semaphores, elections } = parts;
  pool.on('member', (session: SessionInfo) => client.emit('session', session));
  pool.on('state', (state: ConnectionState) => client.emit('state', state));
  for (const member of pool.members) {
    // A member's events reach only its own queues; each lease and election filters by its
    // own session: another session's loss or drop never counts.
    member.on(
      'session-lost',
      (session: ZkSession, reason: 'session-expired' | 'connection-lost') => {
        queues.onSessionLost(member, session, reason);
        semaphores.onSessionLost(session, reason);
        elections.onSessionLost(session, reason);
      },
    );
    member.on('session', (session: ZkSession) => watchSession(parts, member, session));
    watchSession(parts, member, member.current);
  }
}

/** The suspensions and reconnections of `session`, one session of pool member `member`. */
function watchSession(parts: ClientParts, member: ZkConnection, session: ZkSession): void {
  const { queues, semaphores, elections } = parts;
  session.on('suspended', () => {
    queues.onSuspended(member, session);
    semaphores.onSuspended(session);
    elections.onSuspended(session);
  });
  session.on('reconnected', () => {
    queues.onReconnected(member, session);
    semaphores.onReconnected(session);
    elections.onReconnected(session);
  });
}

/**
 * @internal Releases, lets node requests under way finish and cleans up, for at most
 * sessionTimeoutMs (by then a session that cannot reach ZooKeeper counts as lost, and its nodes
 * as gone), then closes the session, which waits at most requestTimeoutMs for the server: close()
 * returns within sessionTimeoutMs + requestTimeoutMs, whatever ZooKeeper does.
 */
export async function shutdown(
  client: EventEmitter,
  parts: ClientParts,
  sessionTimeoutMs: number,
): Promise<void> {
  // Elections first: the next participant (maybe in another process) leads at once.
  const elections = parts.elections.closeAll();
  const semaphores = parts.semaphores.close();
  const queues = parts.queues.all();
  for (const q of queues) q.failAll(new ClientClosedError(q.displayPath));
  const releases = queues.flatMap((q) =>
    q.holders.map((holder) => {
      holder.lose('client-closed', 'the ZkLockClient was closed');
      return holder.end();
    }),
  );
  const graceful = async (): Promise<void> => {
    await Promise.all([elections, ...releases, semaphores]);
    // Nodes still being created for callers that gave up are deleted once created: wait, so
    // that the lock paths are empty when the reaper removes them.
    await Promise.all(queues.map((q) => q.whenIdle()));
    await parts.reaper.flush();
  };
  await settleWithin(graceful(), sessionTimeoutMs);
  await parts.pool.close();
  client.removeAllListeners();
}

/** Resolves once `work` has, or after `ms`, whichever comes first (the timer is cleared). */
function settleWithin(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
