// The test runner (docs/design.md "Test runner and Node lines"): Vitest, files one after the
// other (ZooKeeper, ports and processes are shared, as jest --runInBand did before), SWC for
// the decorator metadata NestJS's DI reads. TEST_TIME_SCALE (>= 1) stretches the per-test timeout
// with every other success deadline (test/support/time-scale.ts).
import swc from 'unplugin-swc';
import { defineConfig, type UserConfig } from 'vitest/config';

const scale = Number(process.env.TEST_TIME_SCALE || 1);
if (!Number.isFinite(scale) || scale < 1) {
  throw new Error(`TEST_TIME_SCALE=${process.env.TEST_TIME_SCALE}: expected a number >= 1`);
}

/** Generous: a test that needs this long is waiting for a condition, not for time. */
const testTimeout = Math.round(120_000 * scale);

/** The settings every suite shares; the soak and fault configs spread it and override. */
export const shared = {
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    alias: {
      'nestjs-zookeeper-lock/core/testing': new URL('./lib/core/testing/index.ts', import.meta.url)
        .pathname,
      'nestjs-zookeeper-lock/testing': new URL('./lib/testing/index.ts', import.meta.url).pathname,
      'nestjs-zookeeper-lock/core': new URL('./lib/core/index.ts', import.meta.url).pathname,
      'nestjs-zookeeper-lock': new URL('./lib/index.ts', import.meta.url).pathname,
    },
  },
  test: {
    globals: true,
    // One file after another, each in a fresh process.
    pool: 'forks',
    include: ['{lib,test,sample-app,scripts,bench}/**/*.{spec,e2e-spec}.ts'],
    fileParallelism: false,
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout,
    hookTimeout: testTimeout,
    teardownTimeout: testTimeout,
  },
} satisfies UserConfig;

export default defineConfig(shared);
