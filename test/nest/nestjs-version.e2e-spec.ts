/**
 * The NestJS major the e2e suites run on is the one the run claims: 12 (package.json's
 * devDependencies) by default, 11 when .ci/nestjs-11 sets NESTJS_MAJOR=11 (docs/design.md "Test
 * runner and Node lines"). Checked both here and in a process the tests spawn.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const devDependencies = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  .devDependencies as Record<string, string>;
const expected = process.env.NESTJS_MAJOR ?? devDependencies['@nestjs/core'].replace(/^\D*/, '');
const PACKAGES = ['@nestjs/common', '@nestjs/core', '@nestjs/testing', '@nestjs/platform-express'];

const major = (version: string): string => version.split('.')[0];

it(`loads NestJS ${major(expected)} in the tests and in the processes they spawn`, () => {
  // Each package's main file sits beside its package.json (not every one exports the latter).
  const script = `const { dirname, join } = require('node:path');
    console.log(JSON.stringify(${JSON.stringify(PACKAGES)}.map((p) => require(join(dirname(
      require.resolve(p, { paths: [${JSON.stringify(__dirname)}] })), 'package.json')).version)))`;
  const spawned = JSON.parse(execFileSync(process.execPath, ['-e', script]).toString());
  expect(spawned.map(major)).toEqual(PACKAGES.map(() => major(expected)));
});

it('gives the tests the same NestJS as the spawned processes', async () => {
  const { version } = await import('@nestjs/core/package.json');
  expect(major(version)).toBe(major(expected));
});
