import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // SWC compiles the decorators with their metadata (esbuild, Vite's default, emits none).
  plugins: [swc.vite({ module: { type: 'es6' } })],
  test: {
    globals: true, // the tests shared with the Jest app (test/consumers/app) use the globals
    include: ['test/**/*.consumer-spec.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
