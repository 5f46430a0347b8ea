/**
 * One app instance of the leader-election proof (fixtures/leader.app.ts) as an OS process: its
 * requests and answers over IPC, and what the harness did to it (SIGKILL, SIGTERM, SIGSTOP) and
 * when, on the monotonic clock (fenced-register.ts `monotonicMs`).
 */
import { ChildProcess } from 'node:child_process';
import { scaled } from '../../support/time-scale';
import { monotonicMs } from './fenced-register';

export class AppInstance {
  readonly ready: Promise<void>;
  /** When the harness SIGKILLed it, and when it exited (monotonic ms). */
  killedAt?: number;
  exitedAt?: number;
  /** SIGSTOPped and not resumed yet: it answers nothing. */
  paused = false;
  private readonly exited: Promise<void>;
  private readonly pending = new Map<number, (answer: Record<string, unknown>) => void>();
  private nextId = 1;

  constructor(
    readonly participant: string,
    private readonly child: ChildProcess,
    onMessage: (m: Record<string, unknown>) => void,
  ) {
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        this.exitedAt = monotonicMs();
        resolve();
      }),
    );
    this.ready = new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`${participant} exited (${code}) before it was ready`));
      child.once('exit', onExit);
      child.on('message', (m: Record<string, unknown>) => {
        if (m.type === 'ready') {
          child.off('exit', onExit);
          resolve();
        }
        if (m.type === 'answer') {
          this.pending.get(m.id as number)?.(m);
          this.pending.delete(m.id as number);
        } else onMessage(m);
      });
    });
  }

  get alive(): boolean {
    return this.exitedAt === undefined;
  }

  /** Asks the instance (see leader.app.ts); fails after `timeoutMs`. */
  request(
    type: string,
    extra: Record<string, unknown> = {},
    timeoutMs = scaled(10_000),
  ): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.participant}: no answer to '${type}' in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.error) reject(new Error(`${this.participant}: ${String(answer.error)}`));
        else resolve(answer);
      });
      if (this.child.connected) this.child.send({ id, type, ...extra });
    });
  }

  async kill(): Promise<void> {
    if (!this.alive) return;
    this.killedAt = monotonicMs();
    this.child.kill('SIGCONT');
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /**
   * SIGTERM: the app closes and the process ends by itself. Returns false when it did not end
   * within `timeoutMs` (something was left open) and had to be killed.
   */
  async stop(timeoutMs = scaled(30_000)): Promise<boolean> {
    if (!this.alive) return true;
    this.child.kill('SIGCONT');
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!ended) await this.kill();
    return ended;
  }

  pause(): void {
    this.paused = true;
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.paused = false;
    this.child.kill('SIGCONT');
  }
}

/** Polls `check` until it holds; fails naming `what` (and `state()`) after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = scaled(60_000),
  state: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`not true after ${timeoutMs} ms: ${what} ${state()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
