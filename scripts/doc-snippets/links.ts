import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { repoPath, REPO_ROOT } from './markdown-files';

/** Where every link to a file the package does not ship points (package.json `repository`). */
export const REPOSITORY_URL = 'https://github.com/nestjs-zookeeper-lock/nestjs-zookeeper-lock';
const REPO_FILE = new RegExp(`^${REPOSITORY_URL}/(?:blob|tree)/main/([^#?]*)(?:#(.*))?$`);
/** Inline `[text](target)` and reference definitions `[name]: target`. */
const LINK = /\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)|^\s*\[[^\]]+\]:\s*(\S+)/g;

/**
 * Relative links must name a file of this checkout (and a heading of it, after `#`). The README
 * is also the package page on npm, where only shipped files exist: its relative links must name
 * a file `npm pack` includes; anything else is an absolute link to the repository.
 */
export function checkLinks(files: string[]): string[] {
  const problems: string[] = [];
  const shipped = packedFiles();
  for (const file of files) {
    const lines = readFileSync(file, 'utf8').split('\n');
    let inFence = false;
    lines.forEach((text, i) => {
      if (/^\s*```/.test(text)) inFence = !inFence;
      if (inFence) return;
      for (const match of text.matchAll(LINK)) {
        const target = match[1] ?? match[2];
        const problem = checkLink(target, file, shipped);
        if (problem) problems.push(`${repoPath(file)}:${i + 1}: link ${target}: ${problem}`);
      }
    });
  }
  problems.push(...checkRepositoryField());
  return problems;
}

function checkLink(target: string, file: string, shipped: Set<string>): string | undefined {
  const repoFile = REPO_FILE.exec(target);
  if (repoFile) return checkTarget(join(REPO_ROOT, decodeURI(repoFile[1])), repoFile[2]);
  if (/^[a-z]+:/i.test(target)) {
    if (
      target.startsWith(`${REPOSITORY_URL}/blob/`) ||
      target.startsWith(`${REPOSITORY_URL}/tree/`)
    ) {
      return `a file of this repository: use ${REPOSITORY_URL}/blob/main/<path>`;
    }
    return undefined;
  }
  const [path, anchor] = target.split('#');
  const absolute = path === '' ? file : resolve(dirname(file), decodeURI(path));
  const problem = checkTarget(absolute, anchor);
  if (problem) return problem;
  if (repoPath(file) === 'README.md' && path !== '' && !shipped.has(repoPath(absolute))) {
    return `the package does not ship ${repoPath(absolute)}: link ${REPOSITORY_URL}/blob/main/${repoPath(absolute)}`;
  }
  return undefined;
}

function checkTarget(path: string, anchor: string | undefined): string | undefined {
  if (!existsSync(path)) return `no such file ${repoPath(path)}`;
  if (!anchor || statSync(path).isDirectory() || !path.endsWith('.md')) return undefined;
  if (!headingSlugs(readFileSync(path, 'utf8')).has(anchor))
    return `no heading #${anchor} in ${repoPath(path)}`;
  return undefined;
}

/** GitHub's anchors: lower case, punctuation dropped, spaces to '-', repeats numbered. */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let slug = base;
    for (let n = 1; slugs.has(slug); n++) slug = `${base}-${n}`;
    slugs.add(slug);
  }
  return slugs;
}

function packedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
  return new Set(pack.files.map((f) => f.path));
}

/** The links above only work if npm's page and package.json agree on the repository. */
function checkRepositoryField(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  const url: string | undefined =
    typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  if (!url) return [`package.json: no "repository" (the docs link to ${REPOSITORY_URL})`];
  const normalized = url.replace(/^git\+/, '').replace(/\.git$/, '');
  if (normalized !== REPOSITORY_URL) {
    return [`package.json: "repository" is ${url}; the docs link to ${REPOSITORY_URL}`];
  }
  return [];
}
