/**
 * Running npm and friends for the package checks (scripts/check-package.ts) and the consumer
 * apps (scripts/test-consumers.ts): output is kept and shown only when a step fails.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export const root = join(__dirname, '..', '..');

/** Runs `command` in `cwd`; its output on success, an error carrying all of it on failure. */
export function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  try {
    return execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    throw new Error(`\`${command} ${args.join(' ')}\` failed in ${cwd}:\n${stdout}${stderr}`);
  }
}

/** A fresh folder under the OS temp dir. */
export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `zk-lock-${label}-`));
}

/**
 * A folder of the cache the CI scripts share (`.ci/nestjs-11`, `.ci/node-lines`, the TypeScript
 * lines): `$NODE_LINES_CACHE`, else `$XDG_CACHE_HOME/nestjs-zookeeper-lock`, else
 * `~/.cache/nestjs-zookeeper-lock`; kept between runs.
 */
export function cacheFolder(name: string): string {
  const base =
    process.env.NODE_LINES_CACHE ||
    join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nestjs-zookeeper-lock');
  return join(base, name);
}

/** `npm pack` of this repository (its prepack script builds dist): the tarball's path. */
export function packLibrary(destination: string): string {
  const out = run('npm', ['pack', '--json', '--pack-destination', destination], root);
  const [{ filename }] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string }[];
  return join(destination, filename);
}

/** `npm install` as a user types it: no --legacy-peer-deps, nothing forced. */
export function npmInstall(cwd: string, specs: string[] = []): void {
  run('npm', ['install', '--no-audit', '--no-fund', ...specs], cwd);
}

/** Seconds since `start` (a `performance.now()`), one decimal. */
export function secondsSince(start: number): string {
  return ((performance.now() - start) / 1000).toFixed(1);
}
