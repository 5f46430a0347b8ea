// Owns the module's injection tokens.
/** Injection token of the connected ZkLockClient (see `@InjectZkLockClient()`). */
export const ZK_LOCK_CLIENT = Symbol('ZK_LOCK_CLIENT');

/**
 * Optional: a ZooKeeper server the module runs itself (the testing module's in-memory one), closed
 * with the client when bootstrap fails. A token, so the main entry never loads the server's code.
 */
export const ZK_LOCK_OWN_SERVER = Symbol('ZK_LOCK_OWN_SERVER');
