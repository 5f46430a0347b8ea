/** Owns ZooKeeper's error codes by name: every code of 3.9's KeeperException.Code decodes. */

/** ZooKeeper 3.9's KeeperException.Code, code to name (the names as the Java enum spells them). */
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

/**
 * A request's error as the server coded it (`code` is the number; the message its name), or as
 * the connection ended it (CONNECTION_LOSS, SESSION_EXPIRED, AUTH_FAILED for requests in flight).
 */
export class ZkServerError extends Error {
  constructor(readonly code: number) {
    super(`${codeName(code)}[${code}]`);
    this.name = 'ZkServerError';
  }
}
