/**
 * A plain-Node user of `nestjs-zookeeper-lock/core`: `npm i` of the tarball alone installs
 * nothing else (the library has no dependency of its own, and every NestJS peer is optional), and the core loads through require and import alike.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmInstall, run } from './npm';

/** The library alone: it has no dependency (the ZooKeeper wire is its own). */
const EXPECTED = ['nestjs-zookeeper-lock'];

const PROBE = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const imported = await import('nestjs-zookeeper-lock/core');
const required = require('nestjs-zookeeper-lock/core');
const { InMemoryZooKeeper } = await import('nestjs-zookeeper-lock/core/testing');
if (imported.ZkLockClient !== required.ZkLockClient) throw new Error('two copies of ZkLockClient');
const zookeeper = await InMemoryZooKeeper.start();
const client = await imported.ZkLockClient.connect({ connectionString: zookeeper.connectionString });
const held = await client.withLock('/locks/plain-node', async () => 'held');
await client.close();
await zookeeper.close();
const framework = Object.keys(require.cache).filter((f) => /@nestjs|rxjs|reflect-metadata/.test(f));
if (framework.length > 0) throw new Error('loaded ' + framework.join(', '));
process.stdout.write(held);
`;

/** Installs `tarball` into `dir` (an empty folder) and runs the probe; the installed packages. */
export function checkPlainNodeConsumer(tarball: string, dir: string): string[] {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'plain-node', private: true }));
  npmInstall(dir, [tarball]);
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
  const installed = Object.keys(lock.packages)
    .filter((path) => path.startsWith('node_modules/'))
    .map((path) => path.slice('node_modules/'.length))
    .sort();
  if (JSON.stringify(installed) !== JSON.stringify(EXPECTED)) {
    throw new Error(`npm i of the tarball installed ${installed.join(', ')}; expected ${EXPECTED}`);
  }
  writeFileSync(join(dir, 'probe.mjs'), PROBE);
  const out = run(process.execPath, ['probe.mjs'], dir);
  if (out !== 'held') throw new Error(`the plain-Node probe printed ${JSON.stringify(out)}`);
  return installed;
}
