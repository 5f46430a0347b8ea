import {
  ClientClosedError,
  InvalidLockPathError,
  LockAccessDeniedError,
  LockLostError,
  LockTimeoutError,
  ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
} from '../core/errors';

/** A lock error as every transport reports it: a stable code and the HTTP status it maps to. */
export interface LockErrorInfo {
  code:
    | 'INVALID_LOCK_PATH'
    | 'LOCK_TIMEOUT'
    | 'LOCK_LOST'
    | 'ZOOKEEPER_UNAVAILABLE'
    | 'LOCK_ACCESS_DENIED';
  status: 400 | 409 | 503 | 500;
  message: string;
}

/**
 * The documented errors of the core, by what the caller should do: a missing template value is
 * the caller's fault (400), a busy lock a conflict (409), ZooKeeper trouble or a lost lock ours
 * (503), a lock node whose ACL refuses this service a misconfiguration (500). Undefined for
 * anything else (the method's own errors pass through unchanged).
 */
export function lockErrorInfo(error: unknown): LockErrorInfo | undefined {
  if (!(error instanceof Error)) return undefined;
  const { message } = error;
  if (error instanceof InvalidLockPathError)
    return { code: 'INVALID_LOCK_PATH', status: 400, message };
  if (error instanceof LockTimeoutError) return { code: 'LOCK_TIMEOUT', status: 409, message };
  if (error instanceof LockLostError) return { code: 'LOCK_LOST', status: 503, message };
  if (
    error instanceof ZooKeeperUnavailableError ||
    error instanceof ZooKeeperAuthFailedError ||
    error instanceof ClientClosedError
  ) {
    return { code: 'ZOOKEEPER_UNAVAILABLE', status: 503, message };
  }
  if (error instanceof LockAccessDeniedError)
    return { code: 'LOCK_ACCESS_DENIED', status: 500, message };
  return undefined;
}
