/**
 * `npm run docs:check` (also run by `npm run lint` and CI): every ```ts block of the README,
 * CONTRIBUTING.md, CHANGELOG.md and docs/ is type-checked strict, as a user's project would
 * compile it, and every link is checked; every citation of docs/design.md, anywhere in the
 * repository, names a section it has (scripts/doc-snippets/design-citations.ts). How to write a
 * snippet: CONTRIBUTING.md "Documentation".
 */
import { findMarkdownFiles } from './doc-snippets/markdown-files';
import { extractSnippets } from './doc-snippets/extract';
import { typeCheckSnippets } from './doc-snippets/type-check';
import { checkLinks } from './doc-snippets/links';
import { checkDesignCitations } from './doc-snippets/design-citations';

function main(): void {
  const files = findMarkdownFiles();
  const problems: string[] = [];
  const snippets = files.flatMap((file) => {
    const extracted = extractSnippets(file);
    problems.push(...extracted.problems);
    return extracted.snippets;
  });
  problems.push(...typeCheckSnippets(snippets));
  problems.push(...checkLinks(files));
  problems.push(...checkDesignCitations());
  for (const problem of problems) console.error(problem);
  const summary = `${snippets.length} snippets in ${files.length} files`;
  if (problems.length > 0) {
    console.error(`docs:check: ${problems.length} problem(s) (${summary})`);
    process.exit(1);
  }
  console.log(`docs:check: ${summary} compile strict; every link and design.md citation resolves`);
}

main();
