/** Owns ZooKeeper's error codes (every one named, those we act on) and our requests' errors. */
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
 * The one error a request answered with `code` gets: for a refusal of who we are the documented
 * one (NOAUTH: the ACL does not grant us, for a create the parent's; INVALID_ACL: acl 'creator' on
 * an unauthenticated connection; AUTH_FAILED: the credentials were refused, the session is over),
 * else a ZkRequestError naming the code (every code decodes, see codeName).
 */
export function requestError(
  code: number,
  op: string,
  path: string,
  authFailure: ZooKeeperAuthFailedError | undefined,
): Error {
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
  return new ZkRequestError(
    code,
    op,
    path,
    `ZooKeeper ${op} "${path}": ${codeName(code)}[${code}]`,
  );
}

/** ZooKeeper 3.9's KeeperException.Code, code to name (the Java enum's names, words split by `_`). */
const NAMES: ReadonlyMap<number, string> = new Map([
  [0, 'OK'],
  [-1, 'SYSTEM_ERROR'],
  [-2, 'RUNTIME_INCONSISTENCY'],
  [-3, 'DATA_INCONSISTENCY'],
  [-4, 'CONNECTION_LOSS'],
  [-5, 'MARSHALLING_ERROR'],
  [-6, 'UNIMPLEMENTED'],
  [-7, 'OPERATION_TIMEOUT'],
  [-8, 'BAD_ARGUMENTS'],
  [-12, 'UNKNOWN_SESSION'],
  [-13, 'NEW_CONFIG_NO_QUORUM'],
  [-14, 'RECONFIG_IN_PROGRESS'],
  [-100, 'API_ERROR'],
  [-101, 'NO_NODE'],
  [-102, 'NO_AUTH'],
  [-103, 'BAD_VERSION'],
  [-108, 'NO_CHILDREN_FOR_EPHEMERALS'],
  [-110, 'NODE_EXISTS'],
  [-111, 'NOT_EMPTY'],
  [-112, 'SESSION_EXPIRED'],
  [-113, 'INVALID_CALLBACK'],
  [-114, 'INVALID_ACL'],
  [-115, 'AUTH_FAILED'],
  [-118, 'SESSION_MOVED'],
  [-119, 'NOT_READ_ONLY'],
  [-120, 'EPHEMERAL_ON_LOCAL_SESSION'],
  [-121, 'NO_WATCHER'],
  [-122, 'REQUEST_TIMEOUT'],
  [-123, 'RECONFIG_DISABLED'],
  [-124, 'SESSION_CLOSED_REQUIRE_SASL_AUTH'],
  [-125, 'QUOTA_EXCEEDED'],
  [-127, 'THROTTLED_OP'],
]);

/** Every code ZooKeeper 3.9 defines. */
export const ZOOKEEPER_CODES: readonly number[] = [...NAMES.keys()];

/** The name of `code`; a code no ZooKeeper release defines yet reads as UNKNOWN_CODE. */
export function codeName(code: number): string {
  return NAMES.get(code) ?? 'UNKNOWN_CODE';
}
