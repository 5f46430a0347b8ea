/**
 * The real AppModule under test without ZooKeeper, as a Nest user tests an app: the module
 * imports ZkLockModule.forRoot() (or forRootAsync()) with an address where no ZooKeeper listens,
 * and the test replaces it with ZkLockTestingModule in one call. Nothing connects to that address:
 * the decorated service runs on the in-memory server, a leader-election method leads.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { createServer, type Server } from 'node:net';
import { DistributedLock, LeaderElection, LeaderElectionService, ZkLockModule } from '../../lib';
import { InMemoryZooKeeper, ZkLockTestingModule } from '../../lib/testing';
import { waitFor } from './support/nest-app';

@Injectable()
class StockService {
  readonly stock = new Map<string, number>();

  @DistributedLock('/locks/product:<productId>')
  async deduct(productId: string): Promise<number> {
    const current = this.stock.get(productId) ?? 100;
    await new Promise((resolve) => setTimeout(resolve, 1));
    this.stock.set(productId, current - 1);
    return current - 1;
  }

  @LeaderElection('/leader/reports')
  lead(): void {}
}

/** A port that accepts connections and counts them, standing for the production ZooKeeper. */
async function listeningPort(): Promise<{
  server: Server;
  port: number;
  connections: () => number;
}> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, port, connections: () => count };
}

describe.each([
  [
    'forRoot()',
    (connectionString: string) => ZkLockModule.forRoot({ connectionString, isGlobal: true }),
  ],
  [
    'forRootAsync()',
    (connectionString: string) =>
      ZkLockModule.forRootAsync({ useFactory: () => ({ connectionString }), isGlobal: true }),
  ],
])('the application module with ZkLockModule.%s, overridden in the test', (_, lockModule) => {
  let production: Awaited<ReturnType<typeof listeningPort>>;
  let moduleRef: TestingModule;

  beforeEach(async () => {
    production = await listeningPort();
    @Module({
      imports: [lockModule(`127.0.0.1:${production.port}`)],
      providers: [StockService],
    })
    class AppModule {}
    moduleRef = await ZkLockTestingModule.override(
      Test.createTestingModule({ imports: [AppModule] }),
    ).compile();
    await moduleRef.init();
  });

  afterEach(async () => {
    await moduleRef?.close();
    await new Promise((resolve) => production.server.close(resolve));
  });

  it('runs the decorated service on the in-memory ZooKeeper, never the production address', async () => {
    const service = moduleRef.get(StockService);
    await Promise.all(Array.from({ length: 10 }, () => service.deduct('apple')));
    expect(service.stock.get('apple')).toBe(90);
    expect(moduleRef.get(InMemoryZooKeeper)).toBeInstanceOf(InMemoryZooKeeper);
    expect(production.connections()).toBe(0);
  });

  it('makes the only participant the leader', async () => {
    const elections = moduleRef.get(LeaderElectionService);
    await waitFor(() => elections.isLeader('/leader/reports'), 'leadership');
  });
});
