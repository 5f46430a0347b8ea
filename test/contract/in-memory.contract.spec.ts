/**
 * The lock contract (lock-contract.ts) against the in-memory ZooKeeper of
 * `ZkLockTestingModule.forRoot()`: no Java, no server process.
 */
import { InMemoryZooKeeper } from '../../lib/core/testing';
import { describeLockContract } from './lock-contract';

let zookeeper: InMemoryZooKeeper;
beforeAll(async () => {
  zookeeper = await InMemoryZooKeeper.start();
});
afterAll(() => zookeeper.close());

const exists = async (path: string): Promise<boolean> => zookeeper.paths().includes(path);

describeLockContract('in-memory ZooKeeper', () => ({
  connectionString: () => zookeeper.connectionString,
  exists,
}));

// Clients with several sessions (docs/design.md "Sessions as a pool") keep the same contract.
describeLockContract('in-memory ZooKeeper, 4 sessions per client', () => ({
  connectionString: () => zookeeper.connectionString,
  sessions: 4,
  exists,
}));

it('leaves no node behind once the clients have closed', () => {
  expect(zookeeper.paths().filter((p) => p.includes('_c_'))).toEqual([]);
});
