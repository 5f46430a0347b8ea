import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');

/**
 * The user-facing Markdown: README, CONTRIBUTING, CHANGELOG, the reliability and benchmark
 * reports, and everything under docs/.
 */
export function findMarkdownFiles(): string[] {
  const top = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'RELIABILITY.md', 'bench/README.md']
    .map((name) => join(REPO_ROOT, name))
    .filter((file) => existsSync(file));
  return [...top, ...walk(join(REPO_ROOT, 'docs'))];
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
}

/** `docs/guides/fencing.md`, for messages. */
export function repoPath(file: string): string {
  return relative(REPO_ROOT, file).split('\\').join('/');
}
