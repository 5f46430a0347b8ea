/**
 * The real peers the interop tests run against, from Debian's packages, installed by this
 * tooling when missing (as ZooKeeper is): Apache Curator 5.4 (libcurator-recipes-java, on the
 * machine's Java 17) and kazoo 2.8 (python3-kazoo, for Debian's /usr/bin/python3). The peer
 * programs are ours, under test/interop/peers/.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { installDebianPackage } from './zookeeper';
import { scaled } from './time-scale';

const JAVA_DIR = '/usr/share/java';
const PEERS = join(__dirname, '..', 'interop', 'peers');
const CURATOR_JARS = [
  'curator-recipes',
  'curator-framework',
  'curator-client',
  'zookeeper',
  'zookeeper-jute',
  'guava',
  'slf4j-api',
  'slf4j-nop',
];

export function curatorClasspath(): string {
  const recipes = join(JAVA_DIR, 'curator-recipes.jar');
  if (!existsSync(recipes)) {
    installDebianPackage(
      'libcurator-recipes-java',
      recipes,
      'Apache Curator not found: install it (Debian/Ubuntu: `sudo apt-get install libcurator-recipes-java`).',
    );
  }
  const jars = CURATOR_JARS.map((name) => join(JAVA_DIR, `${name}.jar`)).filter(existsSync);
  return jars.join(':');
}

export interface PeerEvent {
  event:
    | 'ready'
    | 'acquired'
    | 'released'
    | 'error'
    /** A Curator LeaderLatch started, led, stopped leading, closed. */
    | 'started'
    | 'leader'
    | 'notLeader'
    | 'closed';
  id?: string;
  message?: string;
}

export type PeerLockKind = 'mutex' | 'read' | 'write' | 'lease';

const KAZOO = '/usr/lib/python3/dist-packages/kazoo/__init__.py';

/** Debian's python3 with kazoo (not a python3 that comes first on PATH, e.g. pyenv's). */
export function kazooPython(): string {
  if (!existsSync(KAZOO)) {
    installDebianPackage(
      'python3-kazoo',
      KAZOO,
      'kazoo not found: install it (Debian/Ubuntu: `sudo apt-get install python3-kazoo`).',
    );
  }
  return '/usr/bin/python3';
}

/**
 * A peer process (test/interop/peers/CuratorPeer.java or kazoo_peer.py) driven by line commands:
 * "acquire <id> <kind> <path> [maxLeases]", "release <id>", "quit"; it answers JSON lines.
 * The Curator peer also runs LeaderLatches: "latch <id> <path>", "close <id>".
 */
export class LockPeer {
  readonly events: PeerEvent[] = [];
  private readonly listeners = new Set<() => void>();

  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      this.events.push(JSON.parse(line) as PeerEvent);
      for (const listener of this.listeners) listener();
    });
  }

  /** Apache Curator in its own JVM (a single-file Java program); a 10 s session by default. */
  static curator(connectionString: string, sessionTimeoutMs = 10_000): Promise<LockPeer> {
    const source = join(PEERS, 'CuratorPeer.java');
    const args = [connectionString, String(sessionTimeoutMs)];
    return LockPeer.start('java', ['-cp', curatorClasspath(), source, ...args]);
  }

  /** kazoo in its own Python process. */
  static kazoo(connectionString: string): Promise<LockPeer> {
    return LockPeer.start(kazooPython(), [join(PEERS, 'kazoo_peer.py'), connectionString]);
  }

  private static async start(command: string, args: string[]): Promise<LockPeer> {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const peer = new LockPeer(child);
    // A JVM compiling the source on a loaded machine can take a while to start.
    await peer.next((e) => e.event === 'ready', scaled(300_000));
    return peer;
  }

  /** Takes a Curator lock (or a lease of a semaphore with `maxLeases`) in its own thread. */
  acquire(id: string, kind: PeerLockKind, path: string, maxLeases?: number): void {
    this.send(`acquire ${id} ${kind} ${path}${maxLeases === undefined ? '' : ` ${maxLeases}`}`);
  }

  release(id: string): void {
    this.send(`release ${id}`);
  }

  /** Starts a Curator LeaderLatch with participant id `id` on `path`. */
  startLatch(id: string, path: string): void {
    this.send(`latch ${id} ${path}`);
  }

  /** Closes the LeaderLatch `id`: its node is deleted. */
  closeLatch(id: string): void {
    this.send(`close ${id}`);
  }

  /** Kills the peer's process at once (SIGKILL): its session ends only when it expires. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  /** Resolves once the hold `id` has been acquired. */
  acquired(id: string, timeoutMs?: number): Promise<PeerEvent> {
    return this.next((e) => e.id === id && e.event !== 'released', timeoutMs).then((e) => {
      if (e.event === 'error') throw new Error(`peer failed ${id}: ${e.message}`);
      return e;
    });
  }

  hasAcquired(id: string): boolean {
    return this.has((e) => e.id === id && e.event === 'acquired');
  }

  private send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  /** Resolves with the first event (already seen or to come) matching `match`. */
  next(match: (event: PeerEvent) => boolean, timeoutMs = scaled(120_000)): Promise<PeerEvent> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.events.find(match);
        if (!found) return;
        cleanup();
        resolve(found);
      };
      const onExit = (): void => {
        cleanup();
        reject(new Error('the peer exited before the expected event'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the peer sent no matching event in ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        this.child.off('exit', onExit);
      };
      this.listeners.add(check);
      this.child.once('exit', onExit);
      check();
    });
  }

  has(match: (event: PeerEvent) => boolean): boolean {
    return this.events.some(match);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.send('quit');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}
