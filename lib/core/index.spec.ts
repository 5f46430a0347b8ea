import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');

const isFramework = (pkg: string) => /^(@nestjs\/|rxjs$|reflect-metadata$)/.test(pkg);

/** Requires `entry` (source, through ts-node) in a fresh Node process: its exports, and the packages loaded. */
async function load(entry: string): Promise<{ exports: string[]; packages: string[] }> {
  const script = `
    const { sep } = require('node:path');
    const api = require(${JSON.stringify(entry)});
    const packageOf = (file) => {
      const parts = file.split(sep + 'node_modules' + sep);
      if (parts.length < 2) return undefined;
      const [scope, name] = parts.pop().split(sep);
      return scope.startsWith('@') ? scope + '/' + name : scope;
    };
    const packages = new Set(Object.keys(require.cache).map(packageOf).filter(Boolean));
    process.stdout.write(JSON.stringify({ exports: Object.keys(api), packages: [...packages] }));
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
    expect(core.packages).toContain('node-zookeeper-client');
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
    expect(pkg.exports['./core']).toEqual({
      types: './dist/lib/core/index.d.ts',
      default: './dist/lib/core/index.js',
    });
    expect(pkg.exports['.']).toEqual({ types: `./${pkg.types}`, default: `./${pkg.main}` });
    expect(pkg.typesVersions['*'].core).toEqual(['dist/lib/core/index.d.ts']);
    for (const entry of [pkg.exports['.'], pkg.exports['./core']]) {
      const source = entry.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts');
      expect(existsSync(join(root, source))).toBe(true);
    }
  });
});
