/**
 * The package's entries (package.json `exports`) and the API report of each, committed under
 * `api/` (docs/design.md "The published package").
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const root = join(__dirname, '..', '..');

/** Where the committed reports live. */
export const REPORT_FOLDER = join(root, 'api');

export interface ApiEntry {
  /** The subpath users import: `.`, `./core`, ... */
  readonly entry: string;
  /** Its declaration file, relative to the build's `dist/` (`lib/core/index.d.ts`). */
  readonly types: string;
  /** The report's file name in `api/`. */
  readonly report: string;
}

/** One entry per `exports` key with a `types` condition, in the manifest's order. */
export function apiEntries(): ApiEntry[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(manifest.exports).flatMap(([entry, target]) => {
    if (typeof target === 'string' || !target.types) return [];
    const suffix = entry === '.' ? '' : `.${entry.slice(2).split('/').join('-')}`;
    return [
      {
        entry,
        types: relative('dist', target.types),
        report: `${manifest.name}${suffix}.api.md`,
      },
    ];
  });
}
