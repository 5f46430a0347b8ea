// A strict plain-Node consumer of the core entries (no NestJS, rxjs or OpenTelemetry types
// installed), type-checked against the packed tarball (scripts/package/strict-types-consumer.ts).
import { LockLostError, ZkLockClient, type LockHandle } from 'nestjs-zookeeper-lock/core';
import { InMemoryZooKeeper } from 'nestjs-zookeeper-lock/core/testing';

export async function run(): Promise<string> {
  const zookeeper = await InMemoryZooKeeper.start();
  const client = await ZkLockClient.connect({ connectionString: zookeeper.connectionString });
  const handle: LockHandle = await client.acquire('/locks/a');
  handle.signal.addEventListener('abort', () => {
    if (handle.signal.reason instanceof LockLostError) handle.signal.reason.message.trim();
  });
  await handle.release();
  const result = await client.withLock('/locks/b', async () => 'done');
  await client.close();
  await zookeeper.close();
  return result;
}
