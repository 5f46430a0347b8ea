/** The parent's side of a bench worker process: spawn, wait for messages, close. */
import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { FromWorker, ToWorker, WorkerConfig } from './same-key.worker';

const WORKER_FILE = join(__dirname, 'same-key.worker.ts');

type Message = { type: string; message?: string };

/** `In`: what the worker sends (an `{ type: 'error', message }` fails it); `Out`: what it gets. */
export class WorkerHandle<In extends Message = FromWorker, Out extends Message = ToWorker> {
  private readonly inbox: In[] = [];
  private waiting?: { resolve: (m: In) => void; reject: (e: Error) => void };
  private failure?: Error;
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: In) => {
      if (message.type === 'error')
        return this.fail(new Error(`bench worker failed: ${String(message.message)}`));
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
    return WorkerHandle.fork<FromWorker, ToWorker>(WORKER_FILE, config);
  }

  /** Forks `file` (TypeScript, through ts-node) with `config` in BENCH_WORKER_CONFIG. */
  static fork<I extends Message, O extends Message>(
    file: string,
    config: object,
    env: Record<string, string> = {},
  ): WorkerHandle<I, O> {
    const child = fork(file, [], {
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      env: { ...process.env, ...env, BENCH_WORKER_CONFIG: JSON.stringify(config) },
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new WorkerHandle<I, O>(child);
  }

  /** The next message from the worker (in order), or the worker's failure. */
  next<T extends In['type']>(type: T): Promise<Extract<In, { type: T }>> {
    return new Promise<In>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.flush();
    }).then((message) => {
      if (message.type !== type)
        throw new Error(`bench worker sent "${message.type}", expected "${type}"`);
      return message as Extract<In, { type: T }>;
    });
  }

  send(message: Out | { type: 'close' }): void {
    // A worker that is exiting may close the channel first (EPIPE): its exit code tells.
    if (this.child.connected) this.child.send(message, () => undefined);
  }

  /** Kills the worker at once (SIGKILL: a crash) and waits for it to exit. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
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

/**
 * Waits for every worker's 'ready'; if one fails, closes them all and throws. Resolves with the
 * function that closes them all.
 */
export async function allReady(
  workers: ReadonlyArray<WorkerHandle<any, any>>,
): Promise<() => Promise<void>> {
  const close = () => Promise.all(workers.map((w) => w.close())).then(() => undefined);
  try {
    await Promise.all(workers.map((w) => w.next('ready')));
  } catch (error) {
    await close();
    throw error;
  }
  return close;
}
