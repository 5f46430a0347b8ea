/**
 * `npm run api:check` (in `npm run lint` and CI) and `npm run api:update`: the public types of
 * each entry of the package (`.`, `./core`, `./testing`, `./core/testing`), as API Extractor
 * reports them from the declarations the build ships, against the reports committed under
 * `api/`. A change to the public types is then always deliberate: it fails the check until the
 * reports are updated and committed with it. Also fails when the shipped declarations show
 * anything `@internal` or the client's internal hooks (scripts/api/internal-leaks.ts), or do not
 * compile for a consumer that checks libraries.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { apiEntries, REPORT_FOLDER, root } from './api/entries';
import { declarationErrors, emitDeclarations } from './api/declarations';
import { internalLeaks, leaksIn } from './api/internal-leaks';
import { extractReport } from './api/report';

const HOW_TO_UPDATE =
  'If the change is meant, run `npm run api:update` and commit api/*.api.md with it ' +
  '(a change users see also goes into CHANGELOG.md).';

function main(update: boolean): number {
  const work = join(root, 'dist', 'api-report');
  rmSync(work, { recursive: true, force: true });
  const declarations = join(work, 'declarations');
  const tempFolder = join(work, 'reports');
  mkdirSync(tempFolder, { recursive: true });
  emitDeclarations(declarations);
  const problems = internalLeaks(declarations);
  const changed: string[] = [];
  const entries = apiEntries();
  problems.push(
    ...declarationErrors(
      declarations,
      entries.map((e) => e.types),
    ),
  );
  for (const entry of entries) {
    const result = extractReport(entry, { declarations, tempFolder, update });
    problems.push(...result.errors.map((e) => `${entry.entry}: ${e}`));
    problems.push(...leaksIn(`the report of ${entry.entry}`, readFileSync(result.fresh, 'utf8')));
    if (!result.changed) continue;
    changed.push(relative(root, result.committed));
    if (!update) diff(result.committed, result.fresh);
  }
  const expected = new Set(entries.map((e) => e.report));
  for (const name of readdirSync(REPORT_FOLDER).filter((n) => n.endsWith('.api.md'))) {
    if (!expected.has(name)) problems.push(`api/${name}: no entry of package.json has this report`);
  }
  for (const problem of problems) console.error(problem);
  if (update) {
    console.log(`api:update: ${changed.length ? `wrote ${changed.join(', ')}` : 'no change'}`);
  } else if (changed.length > 0) {
    console.error(`api:check: the public types changed (${changed.join(', ')}). ${HOW_TO_UPDATE}`);
  } else if (problems.length === 0) {
    console.log(`api:check: the public types of ${entries.length} entries match api/*.api.md`);
  }
  return problems.length > 0 || (!update && changed.length > 0) ? 1 : 0;
}

/** The difference, committed report first; a report not committed yet shows whole. */
function diff(committed: string, fresh: string): void {
  const shown = spawnSync(
    'git',
    ['diff', '--no-index', '--', relative(root, committed), relative(root, fresh)],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  console.error(shown.stdout || shown.stderr);
}

try {
  process.exitCode = main(process.argv.includes('--update'));
} catch (err) {
  console.error(`api report: ${err instanceof Error ? err.message : err}`);
  process.exitCode = 1;
}
