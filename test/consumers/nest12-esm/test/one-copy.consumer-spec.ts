/**
 * One copy of the library whatever the module system (docs/design.md "The published package"):
 * this ESM app's import of the package and a require of it are the same module instance.
 */
import { createRequire } from 'node:module';
import * as library from 'nestjs-zookeeper-lock';
import * as core from 'nestjs-zookeeper-lock/core';

describe('one copy of the library', () => {
  it('is what import and require both load (no dual package)', () => {
    const required = createRequire(import.meta.url)('nestjs-zookeeper-lock') as typeof library;
    expect(required.ZkLockModule).toBe(library.ZkLockModule);
    expect(required.LockService).toBe(library.LockService);
    expect(required.ZK_LOCK_CLIENT).toBe(library.ZK_LOCK_CLIENT);
    expect(core.ZkLockClient).toBe(library.ZkLockClient);
  });
});
