import { readFileSync } from 'node:fs';
import { repoPath } from './markdown-files';
import { PRELUDES } from './preludes';

/** One ```ts block, wrapped in its prelude: what the type check compiles. */
export interface Snippet {
  /** Markdown file and the line of the block's first code line, for messages. */
  file: string;
  line: number;
  /** The compiled text: prelude head, the block, prelude tail. */
  text: string;
  /** How many lines of `text` come before the block. */
  headLines: number;
  /** The block's indentation in the Markdown file (under a list item), dropped in `text`. */
  indent: number;
  prelude?: string;
}

const FENCE = /^\s*```/;
const TS_FENCE = /^\s*```(ts|typescript)\s*$/;
/** `<!-- snippet: prelude=<name> -->` on the line right above a block. */
const DIRECTIVE = /^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$/;

export function extractSnippets(file: string): { snippets: Snippet[]; problems: string[] } {
  const lines = readFileSync(file, 'utf8').split('\n');
  const snippets: Snippet[] = [];
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i])) continue;
    const end = closingFence(lines, i);
    if (TS_FENCE.test(lines[i])) {
      const where = `${repoPath(file)}:${i + 2}`;
      const directive = i > 0 ? DIRECTIVE.exec(lines[i - 1]) : null;
      const prelude = directive ? preludeName(directive[1], where, problems) : undefined;
      const indent = /^\s*/.exec(lines[i])![0].length;
      const body = lines
        .slice(i + 1, end)
        .map((l) => l.slice(Math.min(indent, /^\s*/.exec(l)![0].length)));
      const wrapped = wrap(body.join('\n'), prelude, where, problems);
      if (wrapped) snippets.push({ file, line: i + 2, prelude, indent, ...wrapped });
    }
    i = end;
  }
  return { snippets, problems };
}

function closingFence(lines: string[], open: number): number {
  for (let j = open + 1; j < lines.length; j++) if (FENCE.test(lines[j])) return j;
  return lines.length;
}

function preludeName(args: string, where: string, problems: string[]): string | undefined {
  const match = /^prelude=([a-z0-9-]+)$/.exec(args);
  if (!match) problems.push(`${where}: unknown snippet directive "${args}" (use prelude=<name>)`);
  return match?.[1];
}

function wrap(
  block: string,
  prelude: string | undefined,
  where: string,
  problems: string[],
): { text: string; headLines: number } | undefined {
  // `export {}` makes every snippet a module: names never clash between snippets.
  if (!prelude) return { text: `${block}\nexport {};\n`, headLines: 0 };
  const found = PRELUDES[prelude];
  if (!found) {
    problems.push(`${where}: no prelude "${prelude}" in scripts/doc-snippets/preludes.ts`);
    return undefined;
  }
  const { head, tail = '' } = found;
  return { text: `${head}${block}\n${tail}\nexport {};\n`, headLines: head.split('\n').length - 1 };
}
