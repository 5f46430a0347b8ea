// The fault suite (issue #13 §2): `npm run test:faults`, a 3-node ensemble under faults. Not part
// of `npm test`; CI runs both. Same transform and TEST_TIME_SCALE knob as jest.config.js; no
// global ZooKeeper: each file starts the ensemble it breaks.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  globalSetup: undefined,
  globalTeardown: undefined,
  testRegex: 'test/faults/.*\\.faults-spec\\.ts$',
  testTimeout: base.testTimeout * 5,
};
