// The inner loop (`npm run test:quick`): the unit specs of lib/ (the in-memory ZooKeeper among
// them), the contract suite on the in-memory ZooKeeper, and the unit specs of the test tooling
// and the bench; no real ZooKeeper started, no process spawned. `npm test` runs these too, with
// what is left out here: the e2e specs on real servers, the entries' check that loads each
// entry in a fresh Node process (lib/core/index.spec.ts), the sample app's specs and the checks
// of scripts/ (the API report and the docs' snippets, which compile the project).
import { configDefaults, defineConfig } from 'vitest/config';
import { shared } from './vitest.config.mts';

export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    include: ['{lib,test/contract,test/support,bench}/**/*.spec.ts'],
    exclude: [...configDefaults.exclude, 'lib/core/index.spec.ts'],
    globalSetup: [],
    setupFiles: [],
  },
});
