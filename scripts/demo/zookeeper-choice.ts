/**
 * Which ZooKeeper the demo runs on: the one ZK_CONNECT names; else a real server from the
 * machine's ZooKeeper install (test/support/zookeeper.ts, which installs Debian's package when it
 * may); else, where none is installed and none can be (no root, no apt, no Java), the in-memory
 * server the package ships as `zk-lock-dev-server`, in a process of its own, said out loud.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startWatchdog } from '../../test/support/watchdog';
import { findZooKeeperClasspath } from '../../test/support/zookeeper';

export type ZooKeeperChoice =
  | { kind: 'given'; connectionString: string }
  | { kind: 'installed' }
  | { kind: 'embedded'; reason: string };

/** What chooseZooKeeper() asks of the machine (the real probes by default). */
export interface ZooKeeperProbes {
  /** The installed ZooKeeper's classpath; throws saying what is missing (may install it). */
  classpath(): string;
  /** Whether a `java` runs here. */
  hasJava(): boolean;
}

const machine: ZooKeeperProbes = {
  classpath: findZooKeeperClasspath,
  hasJava: () => spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0,
};

export function chooseZooKeeper(
  options: { zkConnect?: string; embedded?: boolean },
  probes: ZooKeeperProbes = machine,
): ZooKeeperChoice {
  if (options.zkConnect) return { kind: 'given', connectionString: options.zkConnect };
  if (options.embedded) return { kind: 'embedded', reason: '--embedded-zookeeper.' };
  try {
    probes.classpath();
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      kind: 'embedded',
      reason: `no real ZooKeeper here, and none can be installed: ${why}`,
    };
  }
  if (!probes.hasJava()) {
    return { kind: 'embedded', reason: 'ZooKeeper is installed but no `java` runs here.' };
  }
  return { kind: 'installed' };
}

/** What the demo prints about the embedded server: not ZooKeeper, and why it runs. */
export function embeddedNotice(reason: string): string {
  return (
    'ZooKeeper: running on the embedded in-memory server instead (zk-lock-dev-server; NOT FOR ' +
    `PRODUCTION: one server, no disk). Why: ${reason} Set ZK_CONNECT=host:port to use a real one.`
  );
}

const TS_NODE = require.resolve('ts-node/dist/bin.js');
const BIN = join(__dirname, '..', '..', 'lib', 'core', 'testing', 'dev-server.ts');

/**
 * `zk-lock-dev-server --port 0` from this checkout's source, in a process of its own, with a
 * watchdog: a demo that dies or is signalled before it has a stack to stop leaves no server.
 */
export class EmbeddedZooKeeper {
  private constructor(
    private readonly child: ChildProcess,
    private readonly watchdog: ChildProcess,
    readonly connectionString: string,
  ) {}

  static async start(): Promise<EmbeddedZooKeeper> {
    const child = spawn(process.execPath, [TS_NODE, '--transpile-only', BIN, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const watchdog = startWatchdog(child.pid!);
    const connectionString = await new Promise<string>((resolve, reject) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /^ZK_CONNECT=(\S+)$/m.exec(output);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`zk-lock-dev-server exited ${code}`)));
    }).catch((err: unknown) => {
      watchdog.kill('SIGKILL');
      throw err;
    });
    return new EmbeddedZooKeeper(child, watchdog, connectionString);
  }

  async stop(): Promise<void> {
    this.watchdog.kill('SIGKILL');
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGINT');
    await exited;
  }
}
