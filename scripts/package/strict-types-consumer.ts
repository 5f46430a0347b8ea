/**
 * Strict consumers type-check against the packed tarball (`skipLibCheck: false`, strict) under
 * moduleResolution node16, nodenext and bundler, with each TypeScript line of ./typescripts.ts
 * (5.9, 6.0, 7.0): the NestJS consumer with NestJS 12 and with NestJS 11 installed (see
 * CONSUMERS), the core consumer with nothing but @types/node. test/consumers/types/ holds their
 * sources.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmInstall, root, run } from './npm';
import { installTypeScripts } from './typescripts';

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

interface Consumer {
  name: string;
  /** Its source in test/consumers/types. */
  source: string;
  /** What it installs besides the tarball and @types/node. */
  packages: string[];
  resolutions: string[];
}

/**
 * NestJS 12 is ESM-only, and TypeScript's `module: node16` refuses a CommonJS file (our
 * declarations, like any CommonJS code) importing an ES module, where nodenext (TypeScript 5.8+)
 * and node20 follow Node's require(esm): NestJS 12 is checked under nodenext and bundler, NestJS
 * 11 (CommonJS) under node16. docs/design.md "The published package".
 */
const CONSUMERS: Consumer[] = [
  {
    name: 'nest12',
    source: 'nest-consumer.ts',
    packages: ['@nestjs/common@^12', '@nestjs/core@^12', 'reflect-metadata', 'rxjs'],
    resolutions: ['nodenext', 'bundler'],
  },
  {
    name: 'nest11',
    source: 'nest-consumer.ts',
    packages: ['@nestjs/common@^11', '@nestjs/core@^11', 'reflect-metadata', 'rxjs'],
    resolutions: ['node16'],
  },
  { name: 'core', source: 'core-consumer.ts', packages: [], resolutions: Object.keys(RESOLUTIONS) },
];

/** One consumer folder: its source as an ESM .ts file and, for node16/nodenext, as a .cts too. */
function prepare(dir: string, consumer: Consumer, tarball: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  npmInstall(dir, [tarball, '@types/node@^22', ...consumer.packages]);
  const source = join(root, 'test', 'consumers', 'types', consumer.source);
  copyFileSync(source, join(dir, 'consumer.ts'));
  copyFileSync(source, join(dir, 'consumer.cts'));
  for (const resolution of consumer.resolutions) {
    const files = resolution === 'bundler' ? ['consumer.ts'] : ['consumer.ts', 'consumer.cts'];
    const compilerOptions = {
      ...STRICT,
      module: RESOLUTIONS[resolution],
      moduleResolution: resolution,
    };
    writeFileSync(
      join(dir, `tsconfig.${resolution}.json`),
      JSON.stringify({ compilerOptions, files }),
    );
  }
}

/** Type-checks every consumer under its resolutions with each TypeScript line; the runs, described. */
export function checkStrictConsumers(tarball: string, dir: string): string[] {
  const runs: string[] = [];
  const typescripts = installTypeScripts();
  for (const consumer of CONSUMERS) {
    const consumerDir = join(dir, consumer.name);
    prepare(consumerDir, consumer, tarball);
    for (const { name, tsc } of typescripts) {
      for (const resolution of consumer.resolutions) {
        run(process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`], consumerDir);
        runs.push(`${consumer.name} ${name} ${resolution}`);
      }
    }
  }
  return runs;
}
