/**
 * Strict consumers type-check against the packed tarball (`skipLibCheck: false`, strict) under
 * moduleResolution node16, nodenext and bundler, with TypeScript 5.x and 7.x side by side (npm
 * aliases): the NestJS consumer with NestJS installed, the core consumer with nothing but
 * @types/node. test/consumers/types/ holds their sources.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmInstall, root, run } from './npm';

/** The TypeScript lines checked, as npm aliases: [alias, spec]. */
export const TYPESCRIPTS: [string, string][] = [
  ['typescript5', 'npm:typescript@^5.9.3'],
  ['typescript7', 'npm:typescript@^7.0.2'],
];

/** moduleResolution -> the module setting it goes with. */
const RESOLUTIONS: Record<string, string> = {
  node16: 'node16',
  nodenext: 'nodenext',
  bundler: 'esnext',
};

const STRICT = {
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  target: 'es2022',
  lib: ['es2022'],
  types: ['node'],
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
};

/** One consumer folder: `source` as an ESM .ts file and, for node16/nodenext, as a .cts too. */
function prepare(dir: string, source: string, specs: string[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  npmInstall(dir, specs);
  copyFileSync(join(root, 'test', 'consumers', 'types', source), join(dir, 'consumer.ts'));
  copyFileSync(join(root, 'test', 'consumers', 'types', source), join(dir, 'consumer.cts'));
  for (const [resolution, module] of Object.entries(RESOLUTIONS)) {
    const files = resolution === 'bundler' ? ['consumer.ts'] : ['consumer.ts', 'consumer.cts'];
    const compilerOptions = { ...STRICT, module, moduleResolution: resolution };
    writeFileSync(
      join(dir, `tsconfig.${resolution}.json`),
      JSON.stringify({ compilerOptions, files }),
    );
  }
}

/** Type-checks both consumers under every resolution and TypeScript line; the runs, described. */
export function checkStrictConsumers(tarball: string, dir: string): string[] {
  const typescripts = TYPESCRIPTS.map(([alias, spec]) => `${alias}@${spec}`);
  const nest = join(dir, 'nest');
  const nestPeers = ['@nestjs/common@^11', '@nestjs/core@^11', 'reflect-metadata', 'rxjs'];
  prepare(nest, 'nest-consumer.ts', [tarball, '@types/node@^22', ...nestPeers, ...typescripts]);
  const core = join(dir, 'core');
  prepare(core, 'core-consumer.ts', [tarball, '@types/node@^22', ...typescripts]);
  const runs: string[] = [];
  for (const [alias] of TYPESCRIPTS) {
    for (const resolution of Object.keys(RESOLUTIONS)) {
      for (const consumer of [nest, core]) {
        const tsc = join(consumer, 'node_modules', alias, 'bin', 'tsc');
        const version = run(process.execPath, [tsc, '--version'], consumer).trim();
        run(process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`], consumer);
        runs.push(`${version} ${resolution} ${consumer === nest ? 'nest' : 'core'}`);
      }
    }
  }
  return runs;
}
