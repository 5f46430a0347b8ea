/**
 * The TypeScript lines users compile with, side by side as npm aliases, pinned: the package's
 * types (`npm run check:package`, scripts/package/strict-types-consumer.ts) and the docs'
 * snippets (`npm run docs:check -- --all-ts`) are checked with each. Installed from the npm
 * registry into the cache folder once, and again only when this list changes. TypeScript 7's
 * `typescript` package ships a `tsc` that runs the native compiler (from
 * `@typescript/typescript-<platform>`); it has no in-process compiler API, so every check runs
 * each line's `tsc` as a process.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cacheFolder, npmInstall, root } from './npm';

/** The lines checked, as npm aliases: [alias, spec]. Bump a version here. */
export const TYPESCRIPTS: [string, string][] = [
  ['typescript5', 'npm:typescript@5.9.3'],
  ['typescript6', 'npm:typescript@6.0.3'],
  ['typescript7', 'npm:typescript@7.0.2'],
];

/** One installed TypeScript: `node <tsc> -p <tsconfig>` runs it. */
export interface TypeScriptLine {
  /** `TypeScript 7.0.2` */
  name: string;
  /** Its `typescript` package's folder. */
  dir: string;
  tsc: string;
}

/** The version of the `typescript` package in `dir`. */
function versionIn(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string })
    .version;
}

/** This project's own TypeScript (its devDependency), nothing to install. */
export function projectTypeScript(): TypeScriptLine {
  const dir = join(root, 'node_modules', 'typescript');
  return { name: `TypeScript ${versionIn(dir)}`, dir, tsc: join(dir, 'bin', 'tsc') };
}

/** Each line of TYPESCRIPTS, installed in the cache folder (the first call on a machine installs). */
export function installTypeScripts(): TypeScriptLine[] {
  const dir = cacheFolder('typescripts');
  const manifest = `${JSON.stringify({ private: true, dependencies: Object.fromEntries(TYPESCRIPTS) }, null, 2)}\n`;
  const marker = join(dir, '.installed.package.json');
  if (!existsSync(marker) || readFileSync(marker, 'utf8') !== manifest) {
    // Installed beside the folder and moved in whole, so a run beside this one never sees half.
    const staging = `${dir}.${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, 'package.json'), manifest);
    npmInstall(staging, ['--no-package-lock']);
    writeFileSync(join(staging, '.installed.package.json'), manifest);
    mkdirSync(dirname(dir), { recursive: true });
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(staging, dir);
    } catch (err) {
      // Another run moved its own install in first: the same list, so use it.
      rmSync(staging, { recursive: true, force: true });
      if (readFileSync(marker, 'utf8') !== manifest) throw err;
    }
  }
  return TYPESCRIPTS.map(([alias]) => {
    const line = join(dir, 'node_modules', alias);
    return { name: `TypeScript ${versionIn(line)}`, dir: line, tsc: join(line, 'bin', 'tsc') };
  });
}
