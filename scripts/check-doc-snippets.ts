/**
 * `npm run docs:check` (also run by `npm run lint`): every ```ts block of the README,
 * CONTRIBUTING.md, CHANGELOG.md and docs/ is type-checked strict, as a user's project would
 * compile it, under this project's options and each Nest CLI starter's tsconfig, and every link
 * is checked; every citation of docs/design.md, anywhere in the repository, names a section it
 * has (scripts/doc-snippets/design-citations.ts). It compiles with this project's TypeScript;
 * `npm run docs:check -- --all-ts` (CI, .ci/run) with each line of
 * scripts/package/typescripts.ts instead (5.9, 6.0, 7.0; installed from the npm registry into
 * the cache folder the first time). How to write a snippet: CONTRIBUTING.md "Documentation".
 */
import { findMarkdownFiles } from './doc-snippets/markdown-files';
import { extractSnippets } from './doc-snippets/extract';
import { HAS_NESTJS_11, typeCheckSnippets } from './doc-snippets/type-check';
import { checkLinks } from './doc-snippets/links';
import { checkDesignCitations } from './doc-snippets/design-citations';
import { installTypeScripts, projectTypeScript } from './package/typescripts';

async function main(): Promise<void> {
  const allTs = process.argv.includes('--all-ts');
  const files = findMarkdownFiles();
  const problems: string[] = [];
  const snippets = files.flatMap((file) => {
    const extracted = extractSnippets(file);
    problems.push(...extracted.problems);
    return extracted.snippets;
  });
  const typescripts = allTs ? installTypeScripts() : [projectTypeScript()];
  problems.push(...(await typeCheckSnippets(snippets, typescripts)));
  problems.push(...checkLinks(files));
  problems.push(...checkDesignCitations());
  for (const problem of problems) console.error(problem);
  const summary = `${snippets.length} snippets in ${files.length} files`;
  if (problems.length > 0) {
    console.error(`docs:check: ${problems.length} problem(s) (${summary})`);
    process.exit(1);
  }
  const nest11 = HAS_NESTJS_11 ? 'NestJS 11' : "NestJS 12 (no NestJS 11 in .ci/nestjs-11's cache)";
  console.log(
    `docs:check: ${summary} compile strict with ${typescripts.map((t) => t.name).join(', ')}` +
      ` (the NestJS 11 starter's against ${nest11}); every link and design.md citation resolves`,
  );
}

main().catch((err: unknown) => {
  console.error(`docs:check failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
