// The soak suite (issue #13 §4): `npm run test:soak`. Long by design, so not part of `npm test`;
// CI runs both. Same transform, setup and TEST_TIME_SCALE knob as vitest.config.mts.
import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.mts';

export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    // One file at a time: each loads the machine on purpose.
    fileParallelism: false,
    include: ['test/soak/**/*.soak-spec.ts'],
    testTimeout: shared.test.testTimeout * 5,
  },
});
