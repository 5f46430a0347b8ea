/**
 * What the tarball holds, checked file by file (docs/design.md "The published package"): the
 * license, every export's files, source maps whose sources are in the tarball, declarations that
 * import no untyped package and show nothing internal (scripts/api/internal-leaks.ts), no tests.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { internalLeaks } from '../api/internal-leaks';
import { run } from './npm';

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** Problems found in the unpacked package at `pkg` (its `package/` folder). */
function problemsIn(pkg: string): string[] {
  const problems: string[] = [];
  const files = filesUnder(pkg);
  for (const needed of ['LICENSE', 'README.md', 'package.json']) {
    if (!files.includes(needed)) problems.push(`${needed} is missing`);
  }
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  for (const [entry, target] of Object.entries<Record<string, string> | string>(manifest.exports)) {
    for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
      if (!existsSync(join(pkg, file))) problems.push(`exports["${entry}"] names ${file}: absent`);
    }
  }
  for (const [name, file] of Object.entries<string>(manifest.bin ?? {})) {
    if (!existsSync(join(pkg, file))) problems.push(`bin["${name}"] names ${file}: absent`);
    else if (!readFileSync(join(pkg, file), 'utf8').startsWith('#!/usr/bin/env node\n')) {
      problems.push(`bin["${name}"] (${file}) does not start with #!/usr/bin/env node`);
    }
  }
  for (const map of files.filter((f) => f.endsWith('.js.map'))) {
    const { sources } = JSON.parse(readFileSync(join(pkg, map), 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const file = join(dirname(join(pkg, map)), source);
      if (!existsSync(file)) problems.push(`${map} points to ${relative(pkg, file)}: not shipped`);
    }
  }
  for (const types of files.filter((f) => f.endsWith('.d.ts'))) {
    if (
      /from 'node-zookeeper-client|import\("node-zookeeper-client/.test(
        readFileSync(join(pkg, types), 'utf8'),
      )
    ) {
      problems.push(`${types} imports the untyped node-zookeeper-client`);
    }
  }
  problems.push(...internalLeaks(join(pkg, 'dist')).map((leak) => `dist/${leak}`));
  for (const test of files.filter((f) => /\.(spec|e2e-spec)\.|^test\//.test(f))) {
    problems.push(`${test}: a test, shipped`);
  }
  return problems;
}

/** Unpacks `tarball` into `into` and fails listing every problem; the number of files. */
export function checkTarballContents(tarball: string, into: string): number {
  run('tar', ['-xzf', tarball, '-C', into], into);
  const pkg = join(into, 'package');
  const problems = problemsIn(pkg);
  if (problems.length > 0) throw new Error(`the tarball:\n  ${problems.join('\n  ')}`);
  return filesUnder(pkg).length;
}
