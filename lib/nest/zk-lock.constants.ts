/** Injection token of the connected ZkLockClient (see `@InjectZkLockClient()`). */
export const ZK_LOCK_CLIENT = Symbol('ZK_LOCK_CLIENT');

/** Metadata on a decorated method: its `DistributedLockSpec`. */
export const DISTRIBUTED_LOCK_METADATA = 'zk-lock:distributed-lock';

/** Metadata on a class that has at least one `@DistributedLock` method. */
export const DISTRIBUTED_LOCK_CLASS_METADATA = 'zk-lock:distributed-lock-class';
