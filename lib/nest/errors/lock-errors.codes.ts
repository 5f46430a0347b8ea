// Owns the one table of lock errors every transport answers with: code, status, public message.
import {
  ClientClosedError,
  InvalidLockPathError,
  LockAccessDeniedError,
  LockLostError,
  LockQueueFullError,
  LockTimeoutError,
  shortenedPath,
  ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
} from '../../core/errors';

/**
 * A lock error as every transport reports it to a client: a stable code, the HTTP status it maps
 * to, a short public message and, where it helps the client, the lock's name (the path the
 * application gave, never the namespace or the ZooKeeper address; beyond 120 characters, its
 * first 100 and its length, so a body never grows with a value the client sent). The developer's
 * message, with the limit hit and what to do, stays on the error and goes to the log.
 */
export interface LockErrorInfo {
  code:
    | 'INVALID_LOCK_PATH'
    | 'LOCK_TIMEOUT'
    | 'LOCK_LOST'
    | 'ZOOKEEPER_UNAVAILABLE'
    | 'LOCK_ACCESS_DENIED'
    | 'LOCK_QUEUE_FULL';
  status: 400 | 409 | 429 | 503 | 500;
  message: string;
  lock?: string;
}

/**
 * The documented errors of the core, by what the caller should do: a missing template value is
 * the caller's fault (400), a busy lock a conflict (409), too many callers already waiting for
 * it too many requests (429), ZooKeeper trouble or a lost lock ours (503), a lock node whose ACL
 * refuses this service a misconfiguration (500). Undefined for anything else (the method's own
 * errors pass through unchanged).
 */
export function lockErrorInfo(error: unknown): LockErrorInfo | undefined {
  if (error instanceof InvalidLockPathError) {
    const message = 'The request does not give a valid value for the lock it needs.';
    return { code: 'INVALID_LOCK_PATH', status: 400, message, lock: shortenedPath(error.path) };
  }
  if (error instanceof LockTimeoutError) {
    const message = 'The resource is busy: another request holds its lock. Try again later.';
    return { code: 'LOCK_TIMEOUT', status: 409, message, lock: shortenedPath(error.path) };
  }
  if (error instanceof LockQueueFullError) {
    const message = 'Too many requests are waiting for this resource. Try again later.';
    return { code: 'LOCK_QUEUE_FULL', status: 429, message, lock: shortenedPath(error.path) };
  }
  if (error instanceof LockLostError) {
    const message = 'The lock was lost while the request ran. Try again.';
    return { code: 'LOCK_LOST', status: 503, message, lock: shortenedPath(error.path) };
  }
  if (
    error instanceof ZooKeeperUnavailableError ||
    error instanceof ZooKeeperAuthFailedError ||
    error instanceof ClientClosedError
  ) {
    const message = 'The lock service is unavailable. Try again later.';
    return { code: 'ZOOKEEPER_UNAVAILABLE', status: 503, message };
  }
  if (error instanceof LockAccessDeniedError) {
    return { code: 'LOCK_ACCESS_DENIED', status: 500, message: 'Internal server error' };
  }
  return undefined;
}
