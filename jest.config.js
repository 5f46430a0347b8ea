/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testRegex: '(lib|test|sample-app|scripts|bench)/.*\\.(spec|e2e-spec)\\.ts$',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
};
