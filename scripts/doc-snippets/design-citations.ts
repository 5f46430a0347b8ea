/**
 * Citations of docs/design.md name a section, never a number: a file may cite
 * `docs/design.md "The mutex recipe"` (a heading, a heading without its parenthesis or its part
 * after a comma, or a paragraph's bold lead-in such as "Consumer apps"), or link a heading's
 * anchor; a number after design.md, or inside design.md itself, fails, and so does a name or an
 * anchor design.md does not have.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { headingSlugs } from './links';
import { REPO_ROOT } from './markdown-files';

export const DESIGN = 'docs/design.md';
const SECTION_SIGN = '\u00a7';

/** Comment continuation between the words of a citation that wraps: `\n * `, `\n// `, `\n# `. */
const WRAP = String.raw`(?:\s|\*|//|#(?![\w-]))`;
const BY_NUMBER = new RegExp(String.raw`design\.md(?:${WRAP}|,)*${SECTION_SIGN}\s*\d`, 'g');
const BY_NAME = new RegExp(String.raw`design\.md,?${WRAP}*"([^"]{1,160})"`, 'g');
const BY_ANCHOR = /design\.md#([\w-]+)/g;
/** design.md's own `(§4)`; `#19 §4` and `#19 §3 §6` are issue items. */
const OWN_NUMBER = new RegExp(
  String.raw`(?<!#\d+ (?:${SECTION_SIGN}[\w.]+,? )*)${SECTION_SIGN}\s*\d`,
  'g',
);

/** A name as cited: no backticks or quotes, one space between words. */
function normalize(name: string): string {
  return name
    .replace(new RegExp(String.raw`\s*\n\s*(?:\*|//|#)?\s*`, 'g'), ' ')
    .replace(/[`"]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Every name a citation may give design.md's sections (see the header). */
export function designSectionNames(markdown: string): Set<string> {
  const names = new Set<string>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = /^#{2,6}\s+(.*?)\s*$/.exec(line);
    const lead = /^\s*(?:\d+\.\s+|-\s+)?\*\*([^*]+?)\.?\*\*/.exec(line);
    const name = heading?.[1] ?? lead?.[1];
    if (!name) continue;
    const full = normalize(name);
    names.add(full);
    names.add(full.replace(/\s*\(.*$/, ''));
    names.add(full.replace(/\s*,.*$/, ''));
  }
  return names;
}

/** The line of `index` in `text`, from 1. */
function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** Problems with the design.md citations of one file (`file` relative to the repository). */
export function citationProblems(
  file: string,
  text: string,
  design: { names: Set<string>; slugs: Set<string> },
): string[] {
  const problems: string[] = [];
  const at = (index: number) => `${file}:${lineOf(text, index)}`;
  for (const match of text.matchAll(BY_NUMBER)) {
    problems.push(`${at(match.index)}: cites ${DESIGN} by number; cite the section by name`);
  }
  if (file === DESIGN) {
    for (const match of text.matchAll(OWN_NUMBER)) {
      problems.push(`${at(match.index)}: a section number; name the section ("The mutex recipe")`);
    }
  }
  for (const match of text.matchAll(BY_NAME)) {
    const name = normalize(match[1]);
    if (!design.names.has(name)) {
      problems.push(`${at(match.index)}: ${DESIGN} has no section "${name}"`);
    }
  }
  // Markdown links are checked with the other links (links.ts); here the anchors in code.
  if (!file.endsWith('.md')) {
    for (const match of text.matchAll(BY_ANCHOR)) {
      if (!design.slugs.has(match[1])) {
        problems.push(`${at(match.index)}: ${DESIGN} has no heading #${match[1]}`);
      }
    }
  }
  return problems;
}

/** Text files that may cite design.md: the repository's own, tracked or new. */
function citingFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((f) => /\.(ts|mts|cts|js|mjs|cjs|md|py|java|sh|ya?ml)$/.test(f) || /^\.ci\//.test(f))
    .filter((f) => !/^(api|node_modules|dist)\//.test(f));
}

/** Every problem with the design.md citations of the repository. */
export function checkDesignCitations(): string[] {
  const markdown = readFileSync(join(REPO_ROOT, DESIGN), 'utf8');
  const design = { names: designSectionNames(markdown), slugs: headingSlugs(markdown) };
  return citingFiles().flatMap((file) =>
    citationProblems(file, readFileSync(join(REPO_ROOT, file), 'utf8'), design),
  );
}
