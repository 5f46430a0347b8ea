// Owns the ConfigurableModuleBuilder of ZkLockModule (forRoot, forRootAsync, isGlobal).
import { ConfigurableModuleBuilder, DynamicModule } from '@nestjs/common';
import type { ZkLockModuleOptions } from './zk-lock-module-options.interface';

/**
 * Every module forRoot() and forRootAsync() returned in this process. Nest's `overrideModule()`
 * matches an import by identity, and an application imports the object forRoot() returned, not
 * the class: `ZkLockTestingModule.override()` overrides each of these objects, so a test of the
 * real application module needs no reference to them.
 */
const rootModules = new Set<DynamicModule>();

/** The modules forRoot() and forRootAsync() returned so far (see rootModules). */
export function zkLockRootModules(): readonly DynamicModule[] {
  return [...rootModules];
}

export const {
  ConfigurableModuleClass: ZkLockConfigurableModule,
  MODULE_OPTIONS_TOKEN: ZK_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: ZK_LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ZK_LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ZkLockModuleOptions>({ moduleName: 'ZkLock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createZkLockOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => {
    const module: DynamicModule = { ...definition, global: extras.isGlobal };
    rootModules.add(module);
    return module;
  })
  .build();
