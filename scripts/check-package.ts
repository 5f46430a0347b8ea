/**
 * `npm run check:package`: the package as npm would publish it (docs/design.md "The published
 * package"). Packs this repository (prepack builds), then checks the tarball's files, runs
 * publint and @arethetypeswrong/cli on it, installs it into a plain-Node project (nothing of
 * NestJS may come along) and type-checks strict consumers with TypeScript 5.x and 7.x.
 * Installs from the npm registry into temporary folders, removed at the end.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { packLibrary, root, run, secondsSince, tempDir } from './package/npm';
import { checkPlainNodeConsumer } from './package/plain-node-consumer';
import { checkStrictConsumers } from './package/strict-types-consumer';
import { checkTarballContents } from './package/tarball-contents';

function step(name: string, check: () => string): void {
  const start = performance.now();
  const said = check();
  process.stdout.write(`ok   ${name} (${secondsSince(start)} s): ${said}\n`);
}

function main(): void {
  const dir = tempDir('package');
  const bin = (name: string): string => join(root, 'node_modules', '.bin', name);
  try {
    let tarball = '';
    step('npm pack', () => (tarball = packLibrary(dir)));
    mkdirSync(join(dir, 'unpacked'));
    step('contents', () => `${checkTarballContents(tarball, join(dir, 'unpacked'))} files`);
    step('publint', () => run(bin('publint'), ['--strict', tarball], root).trim());
    step('attw', () => run(bin('attw'), [tarball, '--format', 'table-flipped'], root).trim());
    mkdirSync(join(dir, 'plain'));
    step('plain-Node npm i', () => checkPlainNodeConsumer(tarball, join(dir, 'plain')).join(' '));
    step('strict consumers', () => checkStrictConsumers(tarball, join(dir, 'types')).join('; '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  process.stderr.write(`check:package failed: ${err instanceof Error ? err.message : err}\n`);
  process.exitCode = 1;
}
