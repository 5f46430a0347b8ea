import { InvalidLockPathError, ZkLockError, ZooKeeperUnavailableError } from '../errors';
import type { ZkConnection } from '../zookeeper/zk-connection';
import { ZkCode, codeOf } from '../zookeeper/zk-errors';

/**
 * What a waiter whose node could not be queued is told: only documented errors (errors.ts), each
 * naming the lock path. A raw ZooKeeper request error never reaches a caller.
 */
export function acquireError(err: unknown, path: string, connection: ZkConnection): ZkLockError {
  if (err instanceof ZooKeeperUnavailableError) {
    return new ZooKeeperUnavailableError(
      err.connectionString,
      err.timeoutMs,
      `for lock "${path}" (no session to queue in)`,
    );
  }
  if (err instanceof ZkLockError) return err;
  const code = codeOf(err);
  if (code === ZkCode.NO_CHILDREN_FOR_EPHEMERALS) {
    return new InvalidLockPathError(
      path,
      'it names an ephemeral node (of some session), which cannot have children; a lock path ' +
        'must be a persistent node or not exist yet, so choose a path outside it',
    );
  }
  return unavailable(err, path, connection);
}

/** ZooKeeper did not give a usable answer to a request for `path` (connection trouble, or refused). */
export function unavailable(err: unknown, path: string, connection: ZkConnection): ZkLockError {
  const detail = err instanceof Error ? err.message : String(err);
  const error = new ZooKeeperUnavailableError(
    connection.current.connectionString,
    connection.requestTimeoutMs,
    `a request for lock "${path}" (${detail})`,
  );
  error.cause = err;
  return error;
}
