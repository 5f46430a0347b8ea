/**
 * What the shipped declarations must not show (issue #22 §4): anything marked `@internal`.
 * `stripInternal` removes such declarations; a tag left in a `.d.ts` means one it could not
 * remove (a tag in a plain comment, or on a part tsc keeps).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Problems in one declaration file's text (`name` for messages). */
export function leaksIn(name: string, text: string): string[] {
  return /@internal\b/.test(text) ? [`${name}: an @internal declaration is still there`] : [];
}

/** Problems in every `.d.ts` under `dir` (paths in messages relative to `dir`). */
export function internalLeaks(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.d.ts'))
    .flatMap((entry) => {
      const file = join(entry.parentPath, entry.name);
      return leaksIn(relative(dir, file), readFileSync(file, 'utf8'));
    });
}
