// Owns ZkLockModule: the connected client and the services around it.
import { Logger, Module, Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ZkLockClient } from '../../core/client/lock-client';
import type { ZkLockModuleOptions } from './zk-lock-module-options.interface';
import { ZK_LOCK_CLIENT } from './zk-lock.constants';
import { checkModuleOptions } from './zk-lock.module-options';
import { zkLockExports, zkLockServices } from './zk-lock.providers';
import { ZK_LOCK_MODULE_OPTIONS, ZkLockConfigurableModule } from './zk-lock.module-definition';

/**
 * Connects during bootstrap: an unreachable ZooKeeper fails it with the core's clear error. The
 * client's warning about its options goes to Nest's Logger, unless `onWarning` is given.
 */
const clientProvider: Provider = {
  provide: ZK_LOCK_CLIENT,
  inject: [ZK_LOCK_MODULE_OPTIONS],
  useFactory: (options: ZkLockModuleOptions): Promise<ZkLockClient> => {
    const logger = new Logger('ZkLock');
    return ZkLockClient.connect({
      onWarning: (message) => logger.warn(message),
      ...checkModuleOptions(options, 'ZkLockModule.forRoot()'),
    });
  },
};

/**
 * `ZkLockModule.forRoot({ connectionString, isGlobal: true })` or `forRootAsync({ ... })`.
 * Provides the connected client (`@InjectZkLockClient()`), LockService and the health indicator;
 * closes the session on application shutdown so held locks are freed at once. In unit tests,
 * `ZkLockTestingModule.forRoot()` from `nestjs-zookeeper-lock/testing` stands in for it, and
 * `ZkLockTestingModule.override(Test.createTestingModule({ imports: [AppModule] }))` replaces it
 * in the application's own module.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [clientProvider, ...zkLockServices],
  exports: zkLockExports,
})
export class ZkLockModule extends ZkLockConfigurableModule {}
