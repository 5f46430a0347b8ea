// TEST_TIME_SCALE (>= 1) stretches the per-test timeout with every other success deadline
// (test/support/time-scale.ts).
const scale = Number(process.env.TEST_TIME_SCALE || 1);
if (!Number.isFinite(scale) || scale < 1) {
  throw new Error(`TEST_TIME_SCALE=${process.env.TEST_TIME_SCALE}: expected a number >= 1`);
}

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testRegex: '(lib|test|sample-app|scripts|bench)/.*\\.(spec|e2e-spec)\\.ts$',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Generous: a test that needs this long is waiting for a condition, not for time.
  testTimeout: Math.round(120_000 * scale),
};
