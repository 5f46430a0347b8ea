// The inner loop (`npm run test:quick`): the unit specs (`*.spec.ts`: pure logic, the contract
// suite on the in-memory ZooKeeper of ZkLockTestingModule, the tooling's own checks), no real
// ZooKeeper started. `npm test` runs these too, with the e2e specs on real servers.
import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.mts';

export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    include: ['{lib,test,sample-app,scripts,bench}/**/*.spec.ts'],
    globalSetup: [],
    setupFiles: [],
  },
});
