import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');

const isFramework = (pkg: string) => /^(@nestjs\/|rxjs$|reflect-metadata$)/.test(pkg);

interface Loaded {
  exports: string[];
  /** The packages loaded from node_modules. */
  packages: string[];
  /** The library's own files loaded, relative to the repository ('lib/core/index.ts'). */
  files: string[];
}

/** Requires `entry` (source, through ts-node) in a fresh Node process: what it loaded. */
async function load(entry: string): Promise<Loaded> {
  const script = `
    const { sep } = require('node:path');
    const api = require(${JSON.stringify(entry)});
    const packageOf = (file) => {
      const parts = file.split(sep + 'node_modules' + sep);
      if (parts.length < 2) return undefined;
      const [scope, name] = parts.pop().split(sep);
      return scope.startsWith('@') ? scope + '/' + name : scope;
    };
    const loaded = Object.keys(require.cache);
    const packages = new Set(loaded.map(packageOf).filter(Boolean));
    const files = loaded.filter((f) => !packageOf(f) && f.startsWith(process.cwd() + sep))
      .map((f) => f.slice(process.cwd().length + 1).split(sep).join('/'));
    process.stdout.write(JSON.stringify({ exports: Object.keys(api), packages: [...packages], files }));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-e', script],
    { cwd: root },
  );
  return JSON.parse(stdout);
}

describe('the core entry (nestjs-zookeeper-lock/core)', () => {
  it('loads the lock client and its errors without NestJS, rxjs or reflect-metadata', async () => {
    const core = await load('./lib/core');
    expect(core.packages).not.toContain('node-zookeeper-client'); // the wire is its own
    expect(core.packages.filter(isFramework)).toEqual([]);
    expect(core.exports).toEqual(
      expect.arrayContaining([
        'ZkLockClient',
        'ZkLockError',
        'LockTimeoutError',
        'LockLostError',
        'encodePathSegment',
        'validateLockPath',
      ]),
    );
  });

  it('is re-exported by the package root, which does load NestJS', async () => {
    const [core, all] = await Promise.all([load('./lib/core'), load('./lib')]);
    expect(all.exports).toEqual(expect.arrayContaining(core.exports));
    expect(all.packages).toContain('@nestjs/common'); // so the check above would see NestJS
  });

  it('is what package.json exports as "./core", next to "." (the build of lib/core/index.ts)', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    expect(pkg.exports['.']).toEqual({ types: `./${pkg.types}`, default: `./${pkg.main}` });
    for (const entry of ['core', 'testing', 'core/testing']) {
      expect(pkg.exports[`./${entry}`]).toEqual({
        types: `./dist/lib/${entry}/index.d.ts`,
        default: `./dist/lib/${entry}/index.js`,
      });
      expect(pkg.typesVersions['*'][entry]).toEqual([`dist/lib/${entry}/index.d.ts`]);
      expect(existsSync(join(root, 'lib', entry, 'index.ts'))).toBe(true);
    }
    expect(existsSync(join(root, pkg.main.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toBe(
      true,
    );
  });
});

// docs/design.md "The published package": test doubles only through the testing entries.
describe('the testing entries (nestjs-zookeeper-lock/testing, /core/testing)', () => {
  const isTestDouble = (file: string) => file.startsWith('lib/core/testing/');

  it('keep the in-memory ZooKeeper out of the package root and the core', async () => {
    const [all, core] = await Promise.all([load('./lib'), load('./lib/core')]);
    expect(all.files).toContain('lib/nest/module/zk-lock.module.ts'); // so the check below would see it
    expect(all.files.filter(isTestDouble)).toEqual([]);
    expect(core.files.filter(isTestDouble)).toEqual([]);
    expect(all.exports).not.toContain('InMemoryZooKeeper');
    expect(all.exports).not.toContain('ZkLockTestingModule');
  });

  it('give the testing module with NestJS, the in-memory ZooKeeper without it', async () => {
    const [testing, coreTesting] = await Promise.all([
      load('./lib/testing'),
      load('./lib/core/testing'),
    ]);
    // Sorted: the order of a CommonJS entry's keys is its transpiler's (an ES module namespace
    // sorts them); the names, and that there are no others, are what the entry promises.
    expect([...testing.exports].sort()).toEqual(['InMemoryZooKeeper', 'ZkLockTestingModule']);
    expect(testing.files.filter(isTestDouble)).not.toEqual([]);
    expect(coreTesting.exports).toEqual(['InMemoryZooKeeper']);
    expect(coreTesting.packages.filter(isFramework)).toEqual([]);
  });
});
