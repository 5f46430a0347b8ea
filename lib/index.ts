// The framework-free core, listed in lib/core/index.ts (alone: `nestjs-zookeeper-lock/core`,
// which does not load NestJS).
export * from './core';

// NestJS layer
export { ZkLockModule } from './nest/zk-lock.module';
export type {
  ZkLockModuleOptions,
  ZkLockOptionsFactory,
} from './nest/zk-lock-module-options.interface';
export { LockService } from './nest/lock.service';
export {
  LeaderElection,
  OnLeadershipGranted,
  OnLeadershipRevoked,
} from './nest/decorators/leader-election.decorator';
export { LeaderElectionService } from './nest/runtime/leader-election.service';
export type { ElectionHealth } from './nest/runtime/leader-election.service';
export { DistributedLock } from './nest/distributed-lock.decorator';
export type { DistributedLockOptions } from './nest/distributed-lock.options';
export { DistributedSemaphore } from './nest/distributed-semaphore.decorator';
export type { DistributedSemaphoreOptions } from './nest/distributed-semaphore.decorator';
export { DistributedLockInterceptor } from './nest/distributed-lock.interceptor';
export { InjectZkLockClient } from './nest/inject-zk-lock-client.decorator';
export { ZK_LOCK_CLIENT } from './nest/zk-lock.constants';
export { ZkLockHealthIndicator } from './nest/zk-lock.health';
export { ZkLockTelemetry } from './nest/zk-lock.telemetry';
export type { ZkLockHealthResult } from './nest/zk-lock.health';
export { toHttpError } from './nest/lock-errors.http';
export { lockErrorInfo } from './nest/lock-errors.codes';
export type { LockErrorInfo } from './nest/lock-errors.codes';
export { LockErrorsInterceptor } from './nest/lock-errors.interceptor';
export { LockErrorsFilter } from './nest/lock-errors.filter';
