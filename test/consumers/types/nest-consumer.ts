// A strict consumer of every entry, type-checked against the packed tarball under node16,
// nodenext and bundler resolution (scripts/package/strict-types-consumer.ts). Never run.
import { Injectable, Module } from '@nestjs/common';
import {
  DistributedLock,
  LockService,
  LockTimeoutError,
  ZkLockModule,
  toHttpError,
  type ZkLockModuleOptions,
} from 'nestjs-zookeeper-lock';
import { ZkLockClient, type LockHandle } from 'nestjs-zookeeper-lock/core';
import { InMemoryZooKeeper, ZkLockTestingModule } from 'nestjs-zookeeper-lock/testing';

@Injectable()
export class StockService {
  constructor(private readonly locks: LockService) {}

  @DistributedLock('/locks/product:<productId>', { waitTimeoutMs: 1_000 })
  async deduct(productId: string, quantity: number): Promise<number> {
    return quantity + productId.length;
  }

  fencingToken(path: string): bigint | undefined {
    return this.locks.current(path)?.fencingToken;
  }
}

const options: ZkLockModuleOptions = { connectionString: '127.0.0.1:2181', waitTimeoutMs: 5_000 };

@Module({
  imports: [ZkLockModule.forRoot({ ...options, isGlobal: true })],
  providers: [StockService],
})
export class AppModule {}

@Module({ imports: [ZkLockTestingModule.forRoot({ isGlobal: true })], providers: [StockService] })
export class TestAppModule {}

export async function plain(zookeeper: InMemoryZooKeeper): Promise<bigint> {
  const client = await ZkLockClient.connect({ connectionString: zookeeper.connectionString });
  const handle: LockHandle = await client.acquire('/locks/a', { waitTimeoutMs: 100 });
  const token = handle.fencingToken;
  await handle.release();
  await client.close();
  return token;
}

export const mapped: unknown = toHttpError(new LockTimeoutError('/locks/a', 100, 0));
