// The fault suite (issue #13 §2): `npm run test:faults`, a 3-node ensemble under faults. Not part
// of `npm test`; CI runs both. Same transform and TEST_TIME_SCALE knob as vitest.config.mts; no
// global ZooKeeper: each file starts the ensemble it breaks.
import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.mts';

export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    // One file at a time: each loads the machine on purpose.
    fileParallelism: false,
    include: ['test/faults/**/*.faults-spec.ts'],
    globalSetup: [],
    testTimeout: shared.test.testTimeout * 5,
    hookTimeout: shared.test.testTimeout * 5,
  },
});
