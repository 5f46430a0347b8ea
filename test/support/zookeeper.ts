/**
 * Real ZooKeeper servers for tests, benchmarks and the demo: a standalone server or a
 * loopback ensemble whose members can be stopped, killed, paused (SIGSTOP) and restarted.
 * Never used by lib/: this is project tooling.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
  closeSync,
  cpSync,
} from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenersOf, serverPorts } from './server-ports';
import { scaled } from './time-scale';
import { startWatchdog } from './watchdog';

const DEBIAN_JAR = '/usr/share/java/zookeeper.jar';

/**
 * How often the servers delete empty CONTAINER nodes (`znode.container.checkIntervalMs`, a JVM
 * property: zoo.cfg cannot set it; 60 s by default), so tests can wait for a lock path to go.
 */
export const CONTAINER_CHECK_INTERVAL_MS = 500;

/** Classpath for QuorumPeerMain, installing Debian's package when we may. */
export function findZooKeeperClasspath(): string {
  const home = process.env.ZOOKEEPER_HOME;
  if (home) {
    if (!existsSync(join(home, 'lib'))) {
      throw new Error(
        `ZOOKEEPER_HOME=${home} has no lib/ folder: point it at an unpacked ZooKeeper release.`,
      );
    }
    return `${join(home, 'conf')}:${join(home, 'lib', '*')}`;
  }
  if (!existsSync(DEBIAN_JAR)) {
    installDebianPackage(
      'zookeeper',
      DEBIAN_JAR,
      'ZooKeeper not found. Install it (Debian/Ubuntu: `sudo apt-get install zookeeper`), ' +
        'or set ZOOKEEPER_HOME to an unpacked release, or set ZK_CONNECT=host:port to use a running server.',
    );
  }
  // Debian's jar lists netty-handler but not netty-codec (which its SslHandler needs) in its
  // Class-Path: without it a Netty server (TLS, `secureClientPort`) accepts no client at all.
  // Nor does it bind an SLF4J logger (silent server.log): slf4j-simple (same Debian package as
  // the slf4j-api it lists) writes the warnings and errors, a BindException among them.
  return [
    '/etc/zookeeper/conf',
    DEBIAN_JAR,
    '/usr/share/java/netty-codec.jar',
    '/usr/share/java/slf4j-simple.jar',
  ].join(':');
}

/**
 * Installs a Debian package that provides `file` when we are root with apt (CI's fresh
 * machines); otherwise fails with `missing`, which says what to install.
 */
export function installDebianPackage(pkg: string, file: string, missing: string): void {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = existsSync('/usr/bin/apt-get');
  if (!isRoot || !hasApt) throw new Error(missing);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  process.stderr.write(`[test tooling] installing Debian package "${pkg}" (one time)...\n`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  execFileSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'ignore', env });
  if (!existsSync(file)) throw new Error(`apt-get installed ${pkg} but ${file} is missing`);
}

/**
 * A free TCP port on 127.0.0.1 (the OS picks it, from the ephemeral range): for a port nothing
 * listens on, or a short-lived server. ZooKeeper members take theirs from server-ports.ts.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Sends a four-letter word (ruok, srvr, mntr, wchc, cons...) and returns the answer. */
export function fourLetterWord(port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let out = '';
    const timer = setTimeout(
      () => socket.destroy(new Error(`${word}: no answer in ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('data', (chunk) => (out += chunk.toString()));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    socket.connect(port, '127.0.0.1', () => socket.end(word));
  });
}

/** Parses `mntr` output into numbers (non-numeric values are dropped). */
export async function mntr(port: number): Promise<Record<string, number>> {
  const text = await fourLetterWord(port, 'mntr');
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [key, value] = line.split('\t');
    if (key && value !== undefined && !Number.isNaN(Number(value))) out[key] = Number(value);
  }
  return out;
}

/**
 * Watches the server holds on `root` and the paths below it (`wchp`: data and child watches, one
 * per path and session). Unlike mntr's zk_watch_count, which counts the whole server's, this
 * counts only a file's own root, so it holds on the run's shared server while other files run.
 */
export async function watchesUnder(port: number, root: string): Promise<number> {
  const text = await fourLetterWord(port, 'wchp', 5000);
  let count = 0;
  let inRoot = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('/')) inRoot = line === root || line.startsWith(`${root}/`);
    else if (inRoot && line.trim().startsWith('0x')) count++;
  }
  return count;
}

/** A process's state as the kernel shows it (/proc; without it, alive or not). */
export function processState(pid: number): 'running' | 'stopped' | 'gone' {
  try {
    // The state is the field after the command name, which is in parentheses.
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
    if (state === 'Z' || state === 'X') return 'gone';
    return state === 'T' || state === 't' ? 'stopped' : 'running';
  } catch {
    try {
      process.kill(pid, 0);
      return 'running';
    } catch {
      return 'gone';
    }
  }
}

export interface ZooKeeperOptions {
  /** 1 = standalone, 3 = ensemble. */
  size?: number;
  tickTimeMs?: number;
  /** Folder for data dirs and logs; a temporary one by default (removed on stop). */
  baseDir?: string;
  /** A data dir (e.g. with a snapshot, see zookeeper-snapshot.ts) each member starts from. */
  initialDataDir?: string;
  /** Extra zoo.cfg lines (e.g. `ssl.*` settings, `DigestAuthenticationProvider.enabled=false`). */
  extraConfig?: string[];
  /** Also listen on a TLS `secureClientPort` (needs `ssl.*` and Netty in extraConfig). */
  secureClientPort?: boolean;
  /** Extra JVM system properties, e.g. `-Djute.maxbuffer=2048` (not settable in zoo.cfg). */
  jvmFlags?: string[];
}

export class ZooKeeperMember {
  /** The TLS port, when started with `secureClientPort: true`. */
  secureClientPort?: number;
  private proc?: ChildProcess;
  private watchdog?: ChildProcess;

  constructor(
    readonly id: number,
    readonly clientPort: number,
    readonly dataDir: string,
    private readonly configFile: string,
    private readonly classpath: string,
    private readonly jvmFlags: string[] = [],
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return !!this.proc && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  start(): void {
    if (this.running) return;
    const log = openSync(this.logFile, 'a');
    writeSync(log, `--- ${new Date().toISOString()} starting on port ${this.clientPort}\n`);
    this.proc = spawn(
      'java',
      [
        '-Xmx256m',
        // Empty CONTAINER nodes (lock paths) go within a second, not ZooKeeper's default minute.
        `-Dznode.container.checkIntervalMs=${CONTAINER_CHECK_INTERVAL_MS}`,
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-Dzookeeper.admin.enableServer=false',
        '-Dzookeeper.jmx.log4j.disable=true',
        '-Dzookeeper.root.logger=WARN,CONSOLE',
        '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
        '-Dorg.slf4j.simpleLogger.showDateTime=true',
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        ...this.jvmFlags,
        '-cp',
        this.classpath,
        'org.apache.zookeeper.server.quorum.QuorumPeerMain',
        this.configFile,
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    this.watchdog = startWatchdog(this.proc.pid!);
  }

  get logFile(): string {
    return join(this.dataDir, 'server.log');
  }

  /**
   * Waits until the member serves clients (standalone, leader or follower) and checks that the
   * server on its port is this member: `conf` names this member's data dir, not that of a
   * server which took the port while this one was stopped. Fails at once when the port answers
   * for another server or the JVM exited (a port it could not bind), printing server.log's end.
   */
  async waitServing(timeoutMs = scaled(120_000)): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const ours = join(this.dataDir, 'version-2');
    for (;;) {
      if (!this.running) throw this.failure(this.exitReason());
      const srvr = await fourLetterWord(this.clientPort, 'srvr', 1000).catch(() => '');
      if (/Mode: (standalone|leader|follower)/.test(srvr)) {
        const conf = await fourLetterWord(this.clientPort, 'conf', 1000).catch(() => '');
        const dataDir = /^dataDir=(.*)$/m.exec(conf)?.[1];
        if (dataDir === ours) return;
        if (dataDir) {
          throw this.failure(
            `the port answers for another ZooKeeper (dataDir=${dataDir}, not ${ours}): ` +
              'it was taken while this member was stopped',
          );
        }
      }
      if (Date.now() > deadline) throw this.failure(`not serving after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The last `lines` lines of server.log ('' when there is none). */
  logTail(lines = 50): string {
    if (!existsSync(this.logFile)) return '';
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Prints the end of server.log to stderr (stopping the server removes the data dir). */
  printLogTail(why: string): void {
    const member = `ZooKeeper member ${this.id} (port ${this.clientPort})`;
    const lines = [`--- ${member}, ${why}: end of ${this.logFile}`, this.logTail(), '--- end'];
    process.stderr.write(lines.join('\n') + '\n');
  }

  /** `leader`, `follower`, `standalone`, or `down` (not serving: stopped, paused, no quorum). */
  async mode(): Promise<string> {
    if (!this.running) return 'down';
    const srvr = await fourLetterWord(this.clientPort, 'srvr', 1000).catch(() => '');
    return /Mode: (\w+)/.exec(srvr)?.[1] ?? 'down';
  }

  /** Client connections open on this member (`cons`, not counting the one asking). */
  async clientConnections(): Promise<number> {
    const cons = await fourLetterWord(this.clientPort, 'cons', 5000).catch(() => '');
    return Math.max(0, cons.split('\n').filter((line) => line.includes('(queued=')).length - 1);
  }

  /** Graceful stop (SIGTERM), waits for the process to exit. */
  stop(): Promise<void> {
    return this.signalAndWait('SIGTERM');
  }

  /** Crash (SIGKILL), waits for the process to exit. */
  kill(): Promise<void> {
    return this.signalAndWait('SIGKILL');
  }

  /**
   * Freezes the JVM (SIGSTOP) and returns once the kernel shows it stopped: a signal takes a
   * moment to land on a loaded machine, and a test that pauses the server and then sends requests
   * must not have them answered meanwhile.
   */
  pause(): void {
    const pid = this.proc?.pid;
    if (!pid || !this.running) return;
    this.proc!.kill('SIGSTOP');
    if (!existsSync(`/proc/${pid}/stat`)) return; // no /proc: nothing to wait on
    const deadline = Date.now() + scaled(10_000);
    const pauseFor = new Int32Array(new SharedArrayBuffer(4));
    while (Date.now() < deadline) {
      if (processState(pid) !== 'running') return; // stopped, or gone
      Atomics.wait(pauseFor, 0, 0, 5); // a 5 ms sleep: the callers of pause() expect no await
    }
    throw new Error(`ZooKeeper member ${this.id}: not stopped ${scaled(10_000)} ms after SIGSTOP`);
  }

  resume(): void {
    this.proc?.kill('SIGCONT');
  }

  /** Stops and starts the member on the same port (its clients hold it in their connect string). */
  async restart(): Promise<void> {
    await this.stop();
    this.start();
    await this.waitServing();
  }

  private exitReason(): string {
    if (!this.proc) return 'not started';
    const exit = `exited (${this.proc.exitCode ?? this.proc.signalCode})`;
    if (!/java\.net\.BindException/.test(this.logTail())) return exit;
    const ports = [this.clientPort, this.secureClientPort].filter((p) => p !== undefined);
    return (
      `${exit}: a port of ${this.configFile} is taken (java.net.BindException); ` +
      ports.map((port) => `listening on ${port}: ${listenersOf(port)}`).join('; ') +
      '. A restarted member needs its old ports: its clients hold them in their connect string'
    );
  }

  /** An error naming this member and its port, after printing the end of its server.log. */
  private failure(what: string): Error {
    this.printLogTail(what);
    return new Error(
      `ZooKeeper member ${this.id} on port ${this.clientPort}: ${what}. ` +
        `The end of ${this.logFile} is printed above (stderr).`,
    );
  }

  private async signalAndWait(signal: NodeJS.Signals): Promise<void> {
    const proc = this.proc;
    this.watchdog?.kill('SIGKILL');
    this.watchdog = undefined;
    if (!proc || !this.running) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGCONT'); // a paused JVM cannot handle SIGTERM
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

export class ZooKeeperServer {
  private constructor(
    readonly members: ZooKeeperMember[],
    private readonly baseDir: string,
    private readonly ownsBaseDir: boolean,
  ) {}

  /** `127.0.0.1:p1,127.0.0.1:p2,...` */
  get connectionString(): string {
    return this.members.map((m) => `127.0.0.1:${m.clientPort}`).join(',');
  }

  /** `127.0.0.1:s1,...` of the TLS ports (started with `secureClientPort: true`). */
  get secureConnectionString(): string {
    return this.members.map((m) => `127.0.0.1:${m.secureClientPort}`).join(',');
  }

  static async start(options: ZooKeeperOptions = {}): Promise<ZooKeeperServer> {
    const size = options.size ?? 1;
    const classpath = findZooKeeperClasspath();
    const ownsBaseDir = !options.baseDir;
    const baseDir = options.baseDir ?? mkdtempSync(join(tmpdir(), 'zk-'));
    const ports = await serverPorts(size * 3);
    const securePorts = options.secureClientPort ? await serverPorts(size) : [];
    const servers = Array.from({ length: size }, (_, i) => {
      const [, peer, election] = ports.slice(i * 3, i * 3 + 3);
      return `server.${i + 1}=127.0.0.1:${peer}:${election}`;
    });
    const members = Array.from({ length: size }, (_, i) => {
      const id = i + 1;
      const dataDir = join(baseDir, `member-${id}`);
      mkdirSync(dataDir, { recursive: true });
      if (options.initialDataDir) cpSync(options.initialDataDir, dataDir, { recursive: true });
      const clientPort = ports[i * 3];
      const config = [
        `tickTime=${options.tickTimeMs ?? 500}`,
        'initLimit=20',
        'syncLimit=10',
        `dataDir=${dataDir}`,
        `clientPort=${clientPort}`,
        'clientPortAddress=127.0.0.1',
        '4lw.commands.whitelist=*', // srvr and conf for waitServing, mntr, cons, wchc...
        'admin.enableServer=false',
        'minSessionTimeout=1000',
        'maxSessionTimeout=60000',
        'maxClientCnxns=0',
        'preAllocSize=4096',
        'forceSync=no',
        ...(size > 1 ? servers : []),
        ...(options.secureClientPort
          ? [`secureClientPort=${securePorts[i]}`, 'secureClientPortAddress=127.0.0.1']
          : []),
        ...(options.extraConfig ?? []),
      ].join('\n');
      const configFile = join(dataDir, 'zoo.cfg');
      writeFileSync(configFile, config + '\n');
      if (size > 1) writeFileSync(join(dataDir, 'myid'), `${id}\n`);
      const member = new ZooKeeperMember(
        id,
        clientPort,
        dataDir,
        configFile,
        classpath,
        options.jvmFlags,
      );
      member.secureClientPort = securePorts[i];
      return member;
    });
    const server = new ZooKeeperServer(members, baseDir, ownsBaseDir);
    try {
      members.forEach((m) => m.start());
      await Promise.all(members.map((m) => m.waitServing()));
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  /** The member that leads the ensemble now (waits for one, up to `timeoutMs`). */
  async leader(timeoutMs = scaled(120_000)): Promise<ZooKeeperMember> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const member of this.members) {
        const mode = await member.mode();
        if (mode === 'leader' || mode === 'standalone') return member;
      }
      if (Date.now() > deadline) throw new Error(`no ZooKeeper leader after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Waits until every running member serves clients (a leader is elected, quorum holds). */
  async waitForQuorum(timeoutMs = scaled(120_000)): Promise<void> {
    await this.leader(timeoutMs);
    await Promise.all(this.members.filter((m) => m.running).map((m) => m.waitServing(timeoutMs)));
  }

  /** Prints the end of each member's server.log to stderr (see ZooKeeperMember.printLogTail). */
  printLogTails(why: string): void {
    this.members.forEach((m) => m.printLogTail(why));
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((m) => m.stop()));
    if (this.ownsBaseDir) rmSync(this.baseDir, { recursive: true, force: true });
  }
}

/**
 * The connection string to use: ZK_CONNECT when set, else a new standalone server
 * (returned so the caller can stop it).
 */
export async function zooKeeperFromEnv(): Promise<{
  connectionString: string;
  server?: ZooKeeperServer;
}> {
  if (process.env.ZK_CONNECT) return { connectionString: process.env.ZK_CONNECT };
  const server = await ZooKeeperServer.start();
  return { connectionString: server.connectionString, server };
}
