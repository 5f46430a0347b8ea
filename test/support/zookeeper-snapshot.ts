/**
 * Writes a ZooKeeper data dir holding a snapshot with the given nodes, using ZooKeeper's own
 * classes (SeedSnapshot.java, run as a single-file Java program), for a server started with
 * `ZooKeeperServer.start({ initialDataDir })`. Test tooling only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findZooKeeperClasspath } from './zookeeper';

export interface SeedNode {
  path: string;
  /** The sequence number its next sequential child gets (ZooKeeper's stored child counter). */
  nextSequence: number;
  data?: string;
}

/** A new temporary data dir with the nodes (and their missing ancestors) in a snapshot. */
export function writeSnapshot(nodes: SeedNode[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'zk-seed-'));
  const specs = nodes.map((n) => `${n.path}=${n.nextSequence}${n.data ? `:${n.data}` : ''}`);
  execFileSync(
    'java',
    ['-cp', findZooKeeperClasspath(), join(__dirname, 'SeedSnapshot.java'), dir, ...specs],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return dir;
}
