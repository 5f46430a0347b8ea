/** The lock contract (lock-contract.ts) against the real ZooKeeper of the test run. */
import { zkConnectFromEnv } from '../core/support/zk-admin';
import { describeLockContract } from './lock-contract';

describeLockContract('real ZooKeeper', () => ({ connectionString: zkConnectFromEnv }));
