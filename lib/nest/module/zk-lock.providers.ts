// Owns the one list of services ZkLockModule and ZkLockTestingModule both provide.
import { Provider } from '@nestjs/common';
import { DistributedLockExplorer } from '../runtime/distributed-lock.explorer';
import { DistributedLockInterceptor } from '../runtime/distributed-lock.wrapper';
import { LockService } from '../runtime/lock.service';
import { lockErrorProviders } from '../errors/lock-errors.providers';
import { ZK_LOCK_CLIENT } from './zk-lock.constants';
import { ZkLockHealthIndicator } from './zk-lock.health';
import { ZkLockTelemetry } from './zk-lock.telemetry';
import { LeaderElectionExplorer } from '../runtime/leader-election.explorer';
import { LeaderElectionService } from '../runtime/leader-election.service';

/**
 * The services around the client that ZkLockModule and ZkLockTestingModule both provide: one
 * list, so the testing module never lags behind the real one.
 */
export const zkLockServices: Provider[] = [
  LockService,
  DistributedLockExplorer,
  DistributedLockInterceptor,
  ZkLockHealthIndicator,
  ZkLockTelemetry,
  LeaderElectionService,
  LeaderElectionExplorer,
  ...lockErrorProviders,
];

/** What both modules export. */
export const zkLockExports = [
  ZK_LOCK_CLIENT,
  LockService,
  DistributedLockInterceptor,
  ZkLockHealthIndicator,
  LeaderElectionService,
];
