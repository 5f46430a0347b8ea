/**
 * Spawns child Node processes running a fixture (test/core/fixtures/*.ts) with their own
 * ZkLockClient, talks to them over IPC, and makes sure none outlives its test file.
 */
import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { AgentCommand, AgentReply } from '../fixtures/lock-agent';
import type { ZkLockClientOptions } from '../../../lib';

const FIXTURES = join(__dirname, '..', 'fixtures');
const live = new Set<ChildProcess>();

/** Starts `fixtures/<name>.ts` in a new Node process with an IPC channel. */
export function spawnFixture(name: string, env: Record<string, string>): ChildProcess {
  return spawnScript(join(FIXTURES, `${name}.ts`), env);
}

/** Starts any TypeScript file of the repo in a new Node process with an IPC channel. */
export function spawnScript(file: string, env: Record<string, string>): ChildProcess {
  const child = fork(file, [], {
    execArgv: ['-r', require.resolve('ts-node/register/transpile-only')],
    env: {
      ...process.env,
      TS_NODE_PROJECT: join(__dirname, '..', '..', '..', 'tsconfig.json'),
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Resolves with the exit code (or signal name) once the child has exited. */
export function exited(child: ChildProcess): Promise<number | string> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode ?? child.signalCode!);
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal!)));
}

/** Waits for the first IPC message matching `match`. */
export function nextMessage<T>(child: ChildProcess, match: (message: T) => boolean): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T): void => {
      if (!match(message)) return;
      cleanup();
      resolve(message);
    };
    const onExit = (code: number | null, signal: string | null): void => {
      cleanup();
      reject(
        new Error(
          `fixture process ${child.pid} exited (${code ?? signal}) before the expected message`,
        ),
      );
    };
    const cleanup = (): void => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Kills every fixture process still running (call in afterAll/afterEach). */
export async function killAllFixtures(): Promise<void> {
  await Promise.all(
    [...live].map((child) => {
      const done = exited(child);
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      return done;
    }),
  );
}

/** A lock-agent process: one ZkLockClient in another OS process, driven by commands. */
export class LockAgent {
  private nextId = 1;
  private constructor(
    readonly child: ChildProcess,
    readonly pid: number,
    readonly sessionId: string,
  ) {}

  static async start(options: Partial<ZkLockClientOptions> = {}): Promise<LockAgent> {
    const child = spawnFixture('lock-agent', { AGENT_OPTIONS: JSON.stringify(options) });
    const ready = await nextMessage<AgentReply>(child, (m) => m.type === 'ready');
    if (ready.type !== 'ready') throw new Error('unreachable');
    return new LockAgent(child, ready.pid, ready.sessionId);
  }

  /** Sends a command; resolves with its reply ('error' replies included, not thrown). */
  send(command: DistributiveOmit<AgentCommand, 'id'>): Promise<AgentReply> {
    const id = this.nextId++;
    const reply = nextMessage<AgentReply>(this.child, (m) => 'id' in m && m.id === id);
    this.child.send({ ...command, id });
    return reply;
  }

  async acquire(path: string, waitTimeoutMs?: number): Promise<bigint> {
    return tokenOf(await this.send({ op: 'acquire', path, waitTimeoutMs }));
  }

  async release(path: string): Promise<void> {
    const reply = await this.send({ op: 'release', path });
    if (reply.type !== 'released') throw new Error(`release failed: ${JSON.stringify(reply)}`);
  }

  /**
   * Closes the client gracefully and waits for the process to exit on its own: a process that
   * stays alive after close() means the client left a socket or timer behind.
   */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const done = exited(this.child);
    await this.send({ op: 'close' }).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<'stuck'>(
      (resolve) => (timer = setTimeout(() => resolve('stuck'), 10_000)),
    );
    const outcome = await Promise.race([done, stuck]);
    clearTimeout(timer);
    if (outcome === 'stuck') {
      this.child.kill('SIGKILL');
      throw new Error(
        `lock-agent ${this.pid} still running 10 s after close(): a handle was left open`,
      );
    }
  }
}

export function tokenOf(reply: AgentReply): bigint {
  if (reply.type === 'acquired') return BigInt(reply.token);
  throw new Error(`expected "acquired", got ${JSON.stringify(reply)}`);
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
