/**
 * One sample-app instance as a separate OS process (what `npm run start:sample` runs), for the
 * demo and the e2e tests: start on a free loopback port, pause (SIGSTOP), resume, stop.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, WriteStream } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { startWatchdog } from '../../test/support/watchdog';
import { freePort } from '../../test/support/zookeeper';

const ROOT = join(__dirname, '..', '..');
const MAIN = join(ROOT, 'sample-app', 'src', 'main.ts');
const TS_NODE = require.resolve('ts-node/dist/bin.js');

export interface AppInstanceOptions {
  name: string;
  /** ZK_CONNECT, DATABASE_URL, STOCK_IO_DELAY_MS, ZK_SESSION_TIMEOUT_MS, ZK_NAMESPACE... */
  env: Record<string, string>;
  /** The instance's output goes there (and is scanned by waitForLine). */
  logFile: string;
  port?: number;
}

export class AppInstance {
  private partial = '';
  private lines: string[] = [];
  private lineWaiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly proc: ChildProcess,
    private readonly log: WriteStream,
    private readonly watchdog: ChildProcess,
  ) {
    const onData = (chunk: Buffer) => this.onOutput(chunk.toString());
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  static async start(options: AppInstanceOptions): Promise<AppInstance> {
    const port = options.port ?? (await freePort());
    const env = {
      ...process.env,
      HOST: '127.0.0.1',
      INSTANCE_NAME: options.name,
      NO_COLOR: '1',
      ...options.env,
      PORT: String(port),
    };
    const proc = spawn(process.execPath, [TS_NODE, '--transpile-only', MAIN], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const watchdog = startWatchdog(proc.pid!);
    const log = createWriteStream(options.logFile, { flags: 'a' });
    const instance = new AppInstance(options.name, port, proc, log, watchdog);
    try {
      await instance.waitReady();
    } catch (err) {
      await instance.stop();
      throw err;
    }
    return instance;
  }

  /** Resolves with the first output line (past or future) matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    const seen = this.lines.find((line) => pattern.test(line));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { pattern, resolve: (line: string) => (clearTimeout(timer), resolve(line)) };
      const timer = setTimeout(() => {
        this.lineWaiters = this.lineWaiters.filter((w) => w !== waiter);
        reject(
          new Error(`${this.name}: no output line matching ${pattern} within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      this.lineWaiters.push(waiter);
    });
  }

  pause(): void {
    this.proc.kill('SIGSTOP');
  }

  resume(): void {
    this.proc.kill('SIGCONT');
  }

  /** SIGTERM (Nest closes its locks and database), SIGKILL after 10 s; waits for the exit. */
  async stop(): Promise<void> {
    this.watchdog.kill('SIGKILL');
    if (this.running) {
      const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
      this.proc.kill('SIGCONT');
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await new Promise<void>((resolve) => this.log.end(() => resolve()));
  }

  private onOutput(text: string): void {
    this.log.write(text);
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) {
      this.lines.push(line);
      for (const waiter of this.lineWaiters.filter((w) => w.pattern.test(line))) {
        this.lineWaiters = this.lineWaiters.filter((w) => w !== waiter);
        waiter.resolve(line);
      }
    }
    if (this.lines.length > 5000) this.lines = this.lines.slice(-2500);
  }

  /** Ready when it answers HTTP (a 404 for an unknown product is an answer). */
  private async waitReady(timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await answers(this.url))) {
      if (!this.running) {
        throw new Error(`${this.name} exited on start:\n${this.lines.slice(-20).join('\n')}`);
      }
      if (Date.now() > deadline) {
        throw new Error(`${this.name} not answering on ${this.url} after ${timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${url}/products/readiness-probe`, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
