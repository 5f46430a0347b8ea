// The framework-free core, listed in lib/core/index.ts (alone: `nestjs-zookeeper-lock/core`,
// which does not load NestJS).
export * from './core';

// NestJS layer
export { ZkLockModule } from './nest/module/zk-lock.module';
export type {
  ZkLockModuleOptions,
  ZkLockOptionsFactory,
} from './nest/module/zk-lock-module-options.interface';
export { LockService } from './nest/runtime/lock.service';
export {
  LeaderElection,
  OnLeadershipGranted,
  OnLeadershipRevoked,
} from './nest/decorators/leader-election.decorator';
export { LeaderElectionService } from './nest/runtime/leader-election.service';
export type { ElectionHealth } from './nest/runtime/leader-election.service';
export { DistributedLock } from './nest/decorators/distributed-lock.decorator';
export type { DistributedLockOptions } from './nest/decorators/distributed-lock.options';
export { DistributedSemaphore } from './nest/decorators/distributed-semaphore.decorator';
export type { DistributedSemaphoreOptions } from './nest/decorators/distributed-semaphore.decorator';
export { DistributedLockInterceptor } from './nest/runtime/distributed-lock.wrapper';
export { InjectZkLockClient } from './nest/decorators/inject-zk-lock-client.decorator';
export { ZK_LOCK_CLIENT } from './nest/module/zk-lock.constants';
export { ZkLockHealthIndicator } from './nest/module/zk-lock.health';
export { ZkLockTelemetry } from './nest/module/zk-lock.telemetry';
export type { ZkLockHealthOptions, ZkLockHealthResult } from './nest/module/zk-lock.health';
export { toHttpError } from './nest/errors/lock-errors.http';
export { lockErrorInfo } from './nest/errors/lock-errors.codes';
export type { LockErrorInfo } from './nest/errors/lock-errors.codes';
export { LockErrorsInterceptor } from './nest/errors/lock-errors.interceptor';
export { LockErrorsFilter } from './nest/errors/lock-errors.filter';
