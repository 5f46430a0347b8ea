/**
 * `npm run test:consumers [-- app ...]`: the apps users make today, on the package as npm ships
 * it (docs/design.md "Consumer apps"). Packs this repository, copies each app of
 * test/consumers/ (see APPS) to a temporary folder, installs the tarball there with a plain `npm install`
 * (no --legacy-peer-deps; the app's own dependencies come from the npm registry), type-checks it
 * and runs its own tests against a real ZooKeeper (ZK_CONNECT, else one started here).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ZooKeeperServer } from '../test/support/zookeeper';
import { npmInstall, packLibrary, root, run, secondsSince, tempDir } from './package/npm';

/**
 * The fixture apps: a NestJS 12 ESM app with Vitest, a NestJS 11 CommonJS app with Jest. Each is
 * test/consumers/app (the code, tests with the runners' globals) plus its own folder (package.json,
 * tsconfig, runner config, and tests only it can run).
 */
const APPS = ['nest12-esm', 'nest11-cjs'];

function timed<T>(label: string, step: () => T): T {
  const start = performance.now();
  const result = step();
  process.stdout.write(`[consumers] ${label}: ${secondsSince(start)} s\n`);
  return result;
}

function testApp(app: string, tarball: string, dir: string, zkConnect: string): void {
  const appDir = join(dir, app);
  // The app's code (test/consumers/app), then what makes it this kind of app.
  for (const part of ['app', app]) {
    cpSync(join(root, 'test', 'consumers', part), appDir, { recursive: true });
  }
  timed(`${app} npm install <tarball>`, () => npmInstall(appDir, [tarball]));
  timed(`${app} tsc --noEmit`, () => run('npm', ['run', 'typecheck'], appDir));
  const env = { ...process.env, ZK_CONNECT: zkConnect };
  timed(`${app} npm test`, () =>
    execFileSync('npm', ['test'], { cwd: appDir, env, stdio: 'inherit' }),
  );
}

async function main(): Promise<void> {
  const apps = process.argv.slice(2).length > 0 ? process.argv.slice(2) : APPS;
  const dir = tempDir('consumers');
  const server = process.env.ZK_CONNECT ? undefined : await ZooKeeperServer.start();
  try {
    const tarball = timed('npm pack', () => packLibrary(dir));
    const zkConnect = process.env.ZK_CONNECT ?? server!.connectionString;
    for (const app of apps) testApp(app, tarball, dir, zkConnect);
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const start = performance.now();
main().then(
  () => process.stdout.write(`[consumers] all apps passed in ${secondsSince(start)} s\n`),
  (err) => {
    process.stderr.write(`test:consumers failed: ${err instanceof Error ? err.message : err}\n`);
    process.exitCode = 1;
  },
);
