/**
 * `--peers`: the bench scenarios through Apache Curator 5.4 (Java) and kazoo 2.8
 * (Python), our own peer programs in bench/peers/, against the same ZooKeeper right after ours.
 * Each runs all its scenarios in one process after a warm-up, so JVM start-up and JIT stay out
 * of the timings; a scenario that does not finish within its deadline gives a row that says so.
 * The peers are installed from Debian's packages when missing (test/support/peers.ts).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { curatorClasspath, kazooPython } from '../test/support/peers';

export type PeerName = 'curator' | 'kazoo';

export interface PeerRow {
  peer: PeerName;
  scenario: string;
  ops?: number;
  opsPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  violations?: number;
  /** Set when the scenario failed or did not finish within its deadline. */
  error?: string;
}

const PEERS_DIR = join(__dirname, 'peers');

export async function runPeers(
  connectionString: string,
  root: string,
  quick: boolean,
): Promise<PeerRow[]> {
  const mode = quick ? 'quick' : 'full';
  const deadlineS = String(quick ? 20 : 60);
  const curator = await runPeer('curator', 'java', [
    '-cp',
    curatorClasspath(),
    join(PEERS_DIR, 'CuratorBench.java'),
    connectionString,
    `${root}/curator`,
    mode,
    deadlineS,
  ]);
  const kazoo = await runPeer('kazoo', kazooPython(), [
    join(PEERS_DIR, 'kazoo_bench.py'),
    connectionString,
    `${root}/kazoo`,
    mode,
    deadlineS,
  ]);
  return [...curator, ...kazoo];
}

/** Runs one peer program and collects its JSON lines; a peer that hangs is killed. */
function runPeer(peer: PeerName, command: string, args: string[]): Promise<PeerRow[]> {
  process.stderr.write(`[bench] ${peer}: running its scenarios...`);
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const rows: PeerRow[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + String(chunk)).slice(-4000)));
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) rows.push({ peer, ...(JSON.parse(line) as Omit<PeerRow, 'peer'>) });
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 15 * 60_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(killer);
      process.stderr.write(` ${rows.length} scenarios\n`);
      if (code !== 0) {
        rows.push({ peer, scenario: '(all)', error: `exited ${code}: ${stderr.trim()}` });
      }
      resolve(rows);
    });
  });
}
