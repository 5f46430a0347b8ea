export { ZkLockClient } from './core/lock-client';
export type {
  ZkLockClientOptions,
  AcquireOptions,
  LockHandle,
  LockState,
  ConnectionState,
  LockInspection,
  LockNodeInfo,
  LockEvents,
} from './core/types';
export {
  ZkLockError,
  InvalidLockPathError,
  LockTimeoutError,
  LockAbortedError,
  LockLostError,
  ZooKeeperUnavailableError,
  ClientClosedError,
} from './core/errors';
export type { LockLossReason } from './core/errors';
export { validateLockPath, encodePathSegment } from './core/paths';
