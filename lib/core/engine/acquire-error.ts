// The documented errors a raw ZooKeeper failure becomes before it reaches a caller.
import { InvalidLockPathError, ZkLockError, ZooKeeperUnavailableError } from '../errors';
import type { ZkConnection } from '../zookeeper/zk-connection';
import { ZkCode, codeOf, isInDoubt, isSessionGone } from '../zookeeper/zk-errors';

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
  return documentedError(err, path, connection);
}

/**
 * A raw ZooKeeper request error as a documented one: no answer (connection loss, request
 * timeout, session gone) is ZooKeeperUnavailableError; any other server answer is a ZkLockError
 * that says the server refused the request, naming the lock path.
 */
export function documentedError(err: unknown, path: string, connection: ZkConnection): ZkLockError {
  if (err instanceof ZkLockError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  const code = codeOf(err);
  const unanswered = code === undefined || isInDoubt(err) || isSessionGone(err);
  const error = unanswered
    ? new ZooKeeperUnavailableError(
        connection.current.connectionString,
        connection.requestTimeoutMs,
        `a request for lock "${path}" (${detail})`,
      )
    : new ZkLockError(
        `ZooKeeper refused a request for lock "${path}": ${detail}. ` +
          'Check the lock path, ACLs and quotas on the server.',
      );
  error.cause = err;
  return error;
}
