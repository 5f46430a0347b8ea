// The soak suite (issue #13 §4): `npm run test:soak`. Long by design, so not part of `npm test`;
// CI runs both. Same transform, setup and TEST_TIME_SCALE knob as jest.config.js.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testRegex: 'test/soak/.*\\.soak-spec\\.ts$',
  testTimeout: base.testTimeout * 5,
};
