/**
 * The lock contract (lock-contract.ts) against the in-memory ZooKeeper of
 * `ZkLockModule.forTest()`: no Java, no server process.
 */
import { InMemoryZooKeeper } from '../../lib';
import { describeLockContract } from './lock-contract';

let zookeeper: InMemoryZooKeeper;
beforeAll(async () => {
  zookeeper = await InMemoryZooKeeper.start();
});
afterAll(() => zookeeper.close());

describeLockContract('in-memory ZooKeeper', () => ({
  connectionString: () => zookeeper.connectionString,
}));

it('leaves no node behind once the clients have closed', () => {
  expect(zookeeper.paths().filter((p) => p.includes('_c_'))).toEqual([]);
});
