// Owns the ConfigurableModuleBuilder of ZkLockModule (forRoot, forRootAsync, isGlobal).
import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ZkLockModuleOptions } from './zk-lock-module-options.interface';

export const {
  ConfigurableModuleClass: ZkLockConfigurableModule,
  MODULE_OPTIONS_TOKEN: ZK_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: ZK_LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ZK_LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ZkLockModuleOptions>({ moduleName: 'ZkLock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createZkLockOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
