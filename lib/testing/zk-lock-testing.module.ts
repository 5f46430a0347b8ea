// Owns ZkLockTestingModule: ZkLockModule on an in-memory ZooKeeper, for unit tests.
import {
  DynamicModule,
  Inject,
  Injectable,
  Module,
  OnApplicationShutdown,
  Provider,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ZkLockClient } from '../core/client/lock-client';
import { InMemoryZooKeeper } from '../core/testing/in-memory-zookeeper';
import type { ZkLockClientOptions } from '../core/types';
import { checkModuleOptions } from '../nest/module/zk-lock.module-options';
import type { ZkLockModuleOptions } from '../nest/module/zk-lock-module-options.interface';
import { ZK_LOCK_CLIENT, ZK_LOCK_OWN_SERVER } from '../nest/module/zk-lock.constants';
import { ZK_LOCK_MODULE_OPTIONS } from '../nest/module/zk-lock.module-definition';
import { zkLockExports, zkLockServices } from '../nest/module/zk-lock.providers';
import { zkLockRootModules } from '../nest/module/zk-lock.module-definition';

/** Options of `ZkLockTestingModule.forRoot()`: those of ZkLockModule.forRoot() but where ZooKeeper is. */
export type ZkLockTestOptions = Omit<
  ZkLockModuleOptions,
  'connectionString' | 'auth' | 'acl' | 'tls'
> & {
  /** Provide the module's exports to every module (default false, as forRoot). */
  isGlobal?: boolean;
};

/**
 * What `ZkLockTestingModule.override()` needs of `@nestjs/testing`'s TestingModuleBuilder (the
 * package stays out of this one's dependencies).
 */
export interface ModuleOverrides<Builder> {
  overrideModule(module: DynamicModule): { useModule(module: DynamicModule): Builder };
}

/** Closes the in-memory ZooKeeper once the client has closed its session (in either order). */
@Injectable()
class InMemoryZooKeeperCloser implements OnApplicationShutdown {
  constructor(
    private readonly zookeeper: InMemoryZooKeeper,
    @Inject(ZK_LOCK_CLIENT) private readonly client: ZkLockClient,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close(); // idempotent: LockService may already have closed it
    await this.zookeeper.close();
  }
}

/**
 * For unit tests without ZooKeeper, in place of `ZkLockModule.forRoot()`: the same module
 * (LockService, decorators, events) on the real lock engine, connected to an in-memory ZooKeeper
 * in this process (`InMemoryZooKeeper`, injectable: `expireSessions()` makes held locks lost).
 * Close the testing module to stop it. Exported by `nestjs-zookeeper-lock/testing` only, so an
 * application's import of the package never loads the in-memory server.
 */
@Module({})
export class ZkLockTestingModule {
  static forRoot(options: ZkLockTestOptions = {}): DynamicModule {
    const { isGlobal, ...moduleOptions } = options;
    const providers: Provider[] = [
      {
        provide: ZK_LOCK_MODULE_OPTIONS,
        useValue: { telemetry: false, ...moduleOptions, connectionString: 'in-memory' },
      },
      { provide: InMemoryZooKeeper, useFactory: () => InMemoryZooKeeper.start() },
      { provide: ZK_LOCK_OWN_SERVER, useExisting: InMemoryZooKeeper },
      {
        provide: ZK_LOCK_CLIENT,
        inject: [InMemoryZooKeeper],
        useFactory: (zookeeper: InMemoryZooKeeper): Promise<ZkLockClient> => {
          const clientOptions: ZkLockClientOptions = checkModuleOptions(
            { ...moduleOptions, connectionString: zookeeper.connectionString },
            'ZkLockTestingModule.forRoot()',
          );
          return ZkLockClient.connect(clientOptions);
        },
      },
      InMemoryZooKeeperCloser,
      ...zkLockServices,
    ];
    return {
      module: ZkLockTestingModule,
      global: isGlobal ?? false,
      imports: [DiscoveryModule],
      providers,
      exports: [...zkLockExports, InMemoryZooKeeper],
    };
  }

  /**
   * For a test of the application's own module: replaces each `ZkLockModule.forRoot()` and
   * `forRootAsync()` it imports with `ZkLockTestingModule.forRoot(options)`, global where the
   * replaced one was, so nothing connects to the configured ZooKeeper.
   * `await ZkLockTestingModule.override(Test.createTestingModule({ imports: [AppModule] })).compile()`
   * (Nest's `overrideModule(ZkLockModule)` cannot do it: it matches the object forRoot() returned).
   */
  static override<Builder extends ModuleOverrides<Builder>>(
    builder: Builder,
    options: Omit<ZkLockTestOptions, 'isGlobal'> = {},
  ): Builder {
    for (const module of zkLockRootModules()) {
      const stand = ZkLockTestingModule.forRoot({ ...options, isGlobal: module.global ?? false });
      builder.overrideModule(module).useModule(stand);
    }
    return builder;
  }
}
