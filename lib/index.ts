export { ZkLockClient } from './core/lock-client';
export type {
  ZkLockClientOptions,
  AcquireOptions,
  LockHandle,
  LockView,
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

// NestJS layer
export { ZkLockModule } from './nest/zk-lock.module';
export type {
  ZkLockModuleOptions,
  ZkLockOptionsFactory,
} from './nest/zk-lock-module-options.interface';
export { LockService } from './nest/lock.service';
export { DistributedLock } from './nest/distributed-lock.decorator';
export type { DistributedLockOptions } from './nest/distributed-lock.options';
export { DistributedLockInterceptor } from './nest/distributed-lock.interceptor';
export { InjectZkLockClient } from './nest/inject-zk-lock-client.decorator';
export { ZK_LOCK_CLIENT } from './nest/zk-lock.constants';
export { ZkLockHealthIndicator } from './nest/zk-lock.health';
export type { ZkLockHealthResult } from './nest/zk-lock.health';
export { toHttpError } from './nest/lock-http-errors';
