import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  InjectZkLockClient,
  LockService,
  ZK_LOCK_CLIENT,
  ZkLockClient,
  ZkLockModule,
  ZkLockModuleOptions,
  ZkLockOptionsFactory,
  ZooKeeperUnavailableError,
} from '../../lib';
import { freePort } from '../support/zookeeper';
import { testNamespace, zkConnect } from './support/nest-app';

const namespace = testNamespace('module');

@Injectable()
class ZkConfig implements ZkLockOptionsFactory {
  readonly connectionString = zkConnect();
  createZkLockOptions(): ZkLockModuleOptions {
    return { connectionString: this.connectionString, namespace, waitTimeoutMs: 1234 };
  }
}

@Module({ providers: [ZkConfig], exports: [ZkConfig] })
class ZkConfigModule {}

/** A feature module that does not import ZkLockModule: it relies on isGlobal. */
@Injectable()
class Feature {
  constructor(
    readonly locks: LockService,
    @InjectZkLockClient() readonly client: ZkLockClient,
  ) {}
}

@Module({ providers: [Feature] })
class FeatureModule {}

async function boot(lockModule: ReturnType<typeof ZkLockModule.forRoot>): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [lockModule, FeatureModule],
  }).compile();
  moduleRef.useLogger(false);
  return moduleRef.init();
}

describe('ZkLockModule', () => {
  const forms: [string, () => ReturnType<typeof ZkLockModule.forRoot>][] = [
    [
      'forRoot',
      () =>
        ZkLockModule.forRoot({
          connectionString: zkConnect(),
          namespace,
          waitTimeoutMs: 1234,
          isGlobal: true,
        }),
    ],
    [
      'forRootAsync useFactory',
      () =>
        ZkLockModule.forRootAsync({
          imports: [ZkConfigModule],
          inject: [ZkConfig],
          useFactory: async (config: ZkConfig) => ({
            connectionString: config.connectionString,
            namespace,
            waitTimeoutMs: 1234,
          }),
          isGlobal: true,
        }),
    ],
    [
      'forRootAsync useClass',
      () => ZkLockModule.forRootAsync({ useClass: ZkConfig, isGlobal: true }),
    ],
    [
      'forRootAsync useExisting',
      () =>
        ZkLockModule.forRootAsync({
          imports: [ZkConfigModule],
          useExisting: ZkConfig,
          isGlobal: true,
        }),
    ],
  ];

  it.each(forms)(
    '%s connects during bootstrap and provides the client and LockService',
    async (_, make) => {
      const moduleRef = await boot(make());
      try {
        const feature = moduleRef.get(Feature);
        expect(feature.client).toBeInstanceOf(ZkLockClient);
        expect(moduleRef.get(ZK_LOCK_CLIENT)).toBe(feature.client);
        expect(feature.client.state).toBe('CONNECTED');
        expect(feature.client.sessions).toHaveLength(1); // the default (option sessions)
        expect(feature.locks.defaultWaitTimeoutMs).toBe(1234);
        const handle = await feature.locks.tryAcquire('/module/probe');
        expect(handle).not.toBeNull();
        // The client's one session holds it.
        const { holder } = await feature.locks.inspect('/module/probe');
        const session = feature.client.sessions[0];
        expect(holder?.sessionId).toBe(session.id);
        await handle!.release();
      } finally {
        await moduleRef.close();
      }
    },
  );

  it('fails bootstrap naming the connection string and the timeout when ZooKeeper is unreachable', async () => {
    const connectionString = `127.0.0.1:${await freePort()}`;
    const attempt = Test.createTestingModule({
      imports: [ZkLockModule.forRoot({ connectionString, connectTimeoutMs: 1500 })],
    }).compile();
    await expect(attempt).rejects.toThrow(ZooKeeperUnavailableError);
    await expect(attempt).rejects.toThrow(`"${connectionString}"`);
    await expect(attempt).rejects.toThrow('1500 ms');
  });
});
