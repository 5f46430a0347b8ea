// The bench's own e2e (`npm run test:bench`): `npm run bench -- --quick --peers` still runs every
// row and writes the documented fields with no violation. CI runs it in place of a bare bench
// run; `npm test` does not (it is most of a bench run). Same transform, global ZooKeeper and
// TEST_TIME_SCALE knob as vitest.config.mts.
import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.mts';

export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    include: ['bench/**/*.e2e-spec.ts'],
    exclude: [],
  },
});
