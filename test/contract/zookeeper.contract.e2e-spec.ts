/** The lock contract (lock-contract.ts) against the real ZooKeeper of the test run. */
import { ZkAdmin, zkConnectFromEnv } from '../core/support/zk-admin';
import { CONTRACT_AUTH, describeLockContract } from './lock-contract';

let admin: ZkAdmin;
beforeAll(async () => {
  admin = await ZkAdmin.connect(zkConnectFromEnv(), undefined, [CONTRACT_AUTH]);
});
afterAll(() => admin.close());

describeLockContract('real ZooKeeper', () => ({
  connectionString: zkConnectFromEnv,
  exists: (path) => admin.exists(path),
  removeNamespace: (namespace) => admin.removeTree(namespace),
}));
