import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';

/** A Nest application (test/nest/fixtures/jobs.app.ts, or `fixture`) in a child process of its own. */
export class AppProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  static start(env: Record<string, string>, fixture = 'jobs.app.ts'): Promise<AppProcess> {
    const child = fork(join(__dirname, '..', 'fixtures', fixture), [], {
      execArgv: ['-r', 'ts-node/register/transpile-only'],
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`${fixture} exited with ${code} before listening`));
      child.once('exit', onExit);
      child.once('message', (message: { port: number }) => {
        child.off('exit', onExit);
        resolve(new AppProcess(child, `http://127.0.0.1:${message.port}`));
      });
    });
  }

  /** Sends a signal and waits for the process to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
}
