// What a caller of a WaiterQueue is told when its wait or try ends without the lock.
import { LockTimeoutError, ZooKeeperUnavailableError, type LockQueueAhead } from '../errors';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { Contender } from './contender';
import type { Waiter } from './waiter';

/** @internal A try without a connected session does not wait for one. */
export function noSessionForTry(
  connection: ZkConnection,
  displayPath: string,
): ZooKeeperUnavailableError {
  const session = connection.current;
  const what = `a try of lock "${displayPath}" (the session is ${session.state}, and a try does not wait for one)`;
  return new ZooKeeperUnavailableError(session.connectionString, 0, what);
}

/**
 * @internal
 * A busy lock is a LockTimeoutError, saying who is `ahead` (undefined: not known);
 * a wait spent without a live session is a ZooKeeperUnavailableError.
 */
export function waitTimeoutError(
  connection: ZkConnection,
  displayPath: string,
  waitTimeoutMs: number,
  ahead: number | LockQueueAhead | undefined,
): Error {
  const session = connection.current;
  // A new session after this process stalled (paused past its timeout) is not ZooKeeper's fault.
  if (session.state !== 'connected' && !connection.afterStall) {
    return new ZooKeeperUnavailableError(
      session.connectionString,
      waitTimeoutMs,
      `while waiting for lock "${displayPath}" (session ${session.state})`,
    );
  }
  return new LockTimeoutError(displayPath, waitTimeoutMs, ahead);
}

/**
 * @internal
 * Who is ahead of `waiter` (whose node's place is known) in an exclusive queue: the nodes of
 * other processes ahead of its node in ZooKeeper (each may serve a batch of that process's
 * callers: only the node is known), and the callers of this process ahead of it: those on our
 * nodes ahead, those of its own node before it, and the holder (`holderNode`: the node of ours
 * that holds, if any).
 */
export function exclusiveCallersAhead(
  waiters: readonly Waiter[],
  waiter: Waiter,
  holderNode: Contender | undefined,
): LockQueueAhead {
  const node = waiter.contender!;
  const before = waiters.slice(0, waiters.indexOf(waiter));
  const sameNode = before.filter((w) => w.contender === node).length;
  const onOwnNodesAhead = before.filter(
    (w) => w.contender && w.contender !== node && w.contender.sequence < node.sequence,
  );
  const ownNodesAhead = new Set(onOwnNodesAhead.map((w) => w.contender));
  if (holderNode && holderNode !== node) ownNodesAhead.add(holderNode); // ahead: it holds
  const holding = holderNode ? 1 : 0;
  return {
    otherNodes: node.ahead - ownNodesAhead.size,
    ownCallers: onOwnNodesAhead.length + sameNode + holding,
  };
}
