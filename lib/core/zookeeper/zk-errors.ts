/** Owns ZooKeeper error codes as we act on them, and the errors requests reject with. */
import {
  InvalidLockOptionsError,
  LockAccessDeniedError,
  ZooKeeperAuthFailedError,
} from '../errors';

/** ZooKeeper error codes we act on (org.apache.zookeeper.KeeperException.Code). */
export const ZkCode = {
  CONNECTION_LOSS: -4,
  NO_NODE: -101,
  BAD_VERSION: -103,
  NO_CHILDREN_FOR_EPHEMERALS: -108,
  NO_AUTH: -102,
  INVALID_ACL: -114,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  AUTH_FAILED: -115,
  /** Our own: the request got no answer within requestTimeoutMs. */
  REQUEST_TIMEOUT: -9001,
  /** Our own: the session this request belongs to is lost or closed. */
  SESSION_GONE: -9002,
} as const;

/** An error from a ZooKeeper request, with the server (or adapter) code. */
export class ZkRequestError extends Error {
  constructor(
    readonly code: number,
    readonly op: string,
    readonly path: string,
    message?: string,
  ) {
    super(message ?? `ZooKeeper ${op} "${path}" failed with code ${code}`);
    this.name = 'ZkRequestError';
  }
}

export function codeOf(err: unknown): number | undefined {
  if (err && typeof err === 'object' && typeof (err as any).code === 'number')
    return (err as any).code;
  if (err && typeof (err as any).getCode === 'function') return (err as any).getCode();
  return undefined;
}

export const isNoNode = (err: unknown): boolean => codeOf(err) === ZkCode.NO_NODE;
export const isNodeExists = (err: unknown): boolean => codeOf(err) === ZkCode.NODE_EXISTS;
export const isNotEmpty = (err: unknown): boolean => codeOf(err) === ZkCode.NOT_EMPTY;

/** The outcome of a write is unknown: it may or may not have been applied. */
export function isInDoubt(err: unknown): boolean {
  const code = codeOf(err);
  return code === ZkCode.CONNECTION_LOSS || code === ZkCode.REQUEST_TIMEOUT;
}

/** The session is over: its ephemeral nodes are (or will be) gone. */
export function isSessionGone(err: unknown): boolean {
  const code = codeOf(err);
  return code === ZkCode.SESSION_EXPIRED || code === ZkCode.SESSION_GONE;
}

const OPERATIONS: Record<string, string> = {
  create: 'create a node under',
  delete: 'delete',
  getChildren: 'list the children of',
  getData: 'read',
};

/**
 * The documented error for a request the servers refused for who we are: NOAUTH (the node's ACL
 * does not grant our identity), INVALID_ACL (acl 'creator' on a connection the servers did not
 * authenticate) or AUTH_FAILED (our credentials were refused, the session is over). For a
 * create, the node whose ACL refused is the parent.
 */
export function refusedAccess(
  code: number | undefined,
  op: string,
  path: string,
  authFailure: ZooKeeperAuthFailedError | undefined,
): Error | undefined {
  if (code === ZkCode.NO_AUTH) {
    const target = op === 'create' ? path.slice(0, Math.max(1, path.lastIndexOf('/'))) : path;
    return new LockAccessDeniedError(target, OPERATIONS[op] ?? op);
  }
  if (code === ZkCode.INVALID_ACL) {
    return new InvalidLockOptionsError(
      `"${path}"`,
      "ZooKeeper refused acl 'creator' (INVALID_ACL): this connection has no identity the " +
        'servers authenticated',
      'Set `auth` ("user:password"), or have the servers authenticate client certificates',
    );
  }
  if (code === ZkCode.AUTH_FAILED && authFailure) return authFailure;
  return undefined;
}
