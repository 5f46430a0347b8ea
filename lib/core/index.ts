// The framework-free API: `require('nestjs-zookeeper-lock/core')` loads no NestJS module.
export { ZkLockClient } from './client/lock-client';
export type {
  ZkLockClientOptions,
  AcquireOptions,
  LockHandle,
  LockView,
  LockState,
  ConnectionState,
  SessionInfo,
  LockInspection,
  LockNodeInfo,
  SemaphoreInspection,
  LockEvents,
  MultiLockHandle,
  LockSide,
  Semaphore,
  SemaphoreOptions,
  SemaphoreLease,
  LeaseAcquireOptions,
  WaitOutcome,
  ZkTlsOptions,
} from './types';
export type { LeaderLatch } from './recipes/leader-latch';
export type {
  ElectionOptions,
  ElectionEvents,
  Leadership,
  LeadershipEnd,
  Participant,
  WhenLeaderOptions,
} from './recipes/election-types';
export { LockTelemetry } from './telemetry/lock-telemetry';
export type { LockTelemetryOptions } from './telemetry/lock-telemetry';
export { OTHER_PATHS_LABEL } from './telemetry/lock-telemetry';
export {
  ZkLockError,
  InvalidLockPathError,
  InvalidLockOptionsError,
  LockModeError,
  LockTimeoutError,
  LockAbortedError,
  LockLostError,
  ZooKeeperUnavailableError,
  ZooKeeperAuthFailedError,
  LockAccessDeniedError,
  LockQueueFullError,
  UnexpectedAclError,
  ClientClosedError,
  LeadershipTimeoutError,
  ElectionClosedError,
} from './errors';
export type { LockLossReason, LockQueueAhead, ConnectFailure, WaitersLimitOption } from './errors';
export { validateLockPath, encodePathSegment, MAX_LOCK_PATH_BYTES } from './paths';
export { MAX_NODE_DATA_BYTES } from './client/client-options';
export { fencingTokenText } from './engine/contender';
