/** The parent's side of a same-key worker process: spawn, wait for messages, close. */
import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { FromWorker, ToWorker, WorkerConfig } from './same-key.worker';

const WORKER_FILE = join(__dirname, 'same-key.worker.ts');

export class WorkerHandle {
  private readonly inbox: FromWorker[] = [];
  private waiting?: { resolve: (m: FromWorker) => void; reject: (e: Error) => void };
  private failure?: Error;
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: FromWorker) => {
      if (message.type === 'error')
        return this.fail(new Error(`bench worker failed: ${message.message}`));
      this.inbox.push(message);
      this.flush();
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code, signal) => {
      if (code !== 0)
        this.fail(new Error(`bench worker ${child.pid} exited (code ${code}, signal ${signal})`));
    });
  }

  static spawn(config: WorkerConfig): WorkerHandle {
    const child = fork(WORKER_FILE, [], {
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      env: { ...process.env, BENCH_WORKER_CONFIG: JSON.stringify(config) },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new WorkerHandle(child);
  }

  /** The next message from the worker (in order), or the worker's failure. */
  next<T extends FromWorker['type']>(type: T): Promise<Extract<FromWorker, { type: T }>> {
    return new Promise<FromWorker>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.flush();
    }).then((message) => {
      if (message.type !== type)
        throw new Error(`bench worker sent "${message.type}", expected "${type}"`);
      return message as Extract<FromWorker, { type: T }>;
    });
  }

  send(message: ToWorker): void {
    if (this.child.connected) this.child.send(message);
  }

  /** Asks the worker to close its client, then waits for it to exit (kills it after 15 s). */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.send({ type: 'close' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.flush();
  }

  private flush(): void {
    if (!this.waiting) return;
    const waiting = this.waiting;
    if (this.inbox.length > 0) {
      this.waiting = undefined;
      waiting.resolve(this.inbox.shift()!);
    } else if (this.failure) {
      this.waiting = undefined;
      waiting.reject(this.failure);
    }
  }
}
