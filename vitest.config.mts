// The test runner (docs/design.md "Test runner and Node lines"): Vitest, SWC for the decorator
// metadata NestJS's DI reads, files in parallel in forked processes (they mostly wait on
// ZooKeeper and on the processes they spawn, so more workers than cores pay) on one shared
// ZooKeeper, each file under a root path of its own; a file that stops, pauses or restarts a
// server starts its own (CONTRIBUTING.md "Rules for tests"; test/support/shared-server-guard.ts
// fails a file that breaks the shared one). TEST_TIME_SCALE (>= 1) stretches the per-test timeout
// with every other success deadline (test/support/time-scale.ts); TEST_WORKERS sets how many
// files run at once (default 4).
import swc from 'unplugin-swc';
import { configDefaults, defineConfig, type UserConfig } from 'vitest/config';

const scale = Number(process.env.TEST_TIME_SCALE || 1);
if (!Number.isFinite(scale) || scale < 1) {
  throw new Error(`TEST_TIME_SCALE=${process.env.TEST_TIME_SCALE}: expected a number >= 1`);
}

/** Generous: a test that needs this long is waiting for a condition, not for time. */
const testTimeout = Math.round(120_000 * scale);

const workers = Number(process.env.TEST_WORKERS || 4);
if (!Number.isInteger(workers) || workers < 1) {
  throw new Error(`TEST_WORKERS=${process.env.TEST_WORKERS}: expected a whole number >= 1`);
}

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
    // Each file in a fresh process (no state left by another file), `workers` files at once.
    pool: 'forks',
    include: ['{lib,test,sample-app,scripts,bench}/**/*.{spec,e2e-spec}.ts'],
    // The bench's own e2e runs in CI with the bench (`npm run test:bench`, .ci/run).
    exclude: [...configDefaults.exclude, 'bench/**/*.e2e-spec.ts'],
    fileParallelism: true,
    maxWorkers: workers,
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/shared-server-guard.ts'],
    testTimeout,
    hookTimeout: testTimeout,
    teardownTimeout: testTimeout,
  },
} satisfies UserConfig;

export default defineConfig(shared);
