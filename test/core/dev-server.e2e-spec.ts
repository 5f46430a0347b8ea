/**
 * The `zk-lock-dev-server` command the package ships (package.json "bin"): the in-memory
 * ZooKeeper over TCP for local development, in a process of its own as a user runs it. It says
 * it is not for production, prints ZK_CONNECT, serves a lock, and exits 0 on SIGINT; it refuses a
 * command line it cannot honour (exit 1) rather than serve on a port nobody asked for.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ZkLockClient } from '../../lib/core';
import { parseDevServerArgs } from '../../lib/core/testing/dev-server';
import { killAllFixtures, LockAgent } from './support/agents';
import { scaled } from '../support/time-scale';

const TS_NODE = require.resolve('ts-node/dist/bin.js');
const BIN = join(__dirname, '..', '..', 'lib', 'core', 'testing', 'dev-server.ts');

function startBin(args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [TS_NODE, '--transpile-only', BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function printed(
  output: () => string,
  pattern: RegExp,
  child: ChildProcess,
): Promise<string> {
  for (;;) {
    const match = pattern.exec(output());
    if (match) return match[1];
    if (child.exitCode !== null) throw new Error(`the bin exited ${child.exitCode}: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('zk-lock-dev-server', () => {
  let bin: ReturnType<typeof startBin> | undefined;

  afterEach(async () => {
    await killAllFixtures();
    if (bin && bin.child.exitCode === null) {
      bin.child.kill('SIGKILL');
      await exitOf(bin.child);
    }
    bin = undefined;
  });

  it('says it is not for production, serves a lock, and exits 0 on SIGINT', async () => {
    bin = startBin(['--port', '0']);
    const connect = await printed(bin.output, /^ZK_CONNECT=(\S+)$/m, bin.child);
    expect(bin.output()).toMatch(/^NOT FOR PRODUCTION: an in-memory ZooKeeper/);

    const locks = await ZkLockClient.connect({ connectionString: connect });
    try {
      const held = await locks.acquire('/dev-server/a');
      expect(await locks.tryAcquire('/dev-server/a')).toBeNull();
      await held.release();
      expect(await locks.withLock('/dev-server/a', () => 'ran')).toBe('ran');
    } finally {
      await locks.close();
    }

    bin.child.kill('SIGINT');
    expect(await exitOf(bin.child)).toBe(0);
  });

  it("expires a paused holder's session, as ZooKeeper does: the lock goes to the next", async () => {
    bin = startBin(['--port', '0']);
    const connect = await printed(bin.output, /^ZK_CONNECT=(\S+)$/m, bin.child);
    const holder = await LockAgent.start({ connectionString: connect, sessionTimeoutMs: 2_000 });
    await holder.acquire('/dev-server/paused');
    holder.child.kill('SIGSTOP'); // its socket stays open, silent: no ping, no close
    const locks = await ZkLockClient.connect({ connectionString: connect });
    try {
      const next = await locks.acquire('/dev-server/paused', { waitTimeoutMs: scaled(30_000) });
      await next.release();
    } finally {
      await locks.close();
    }
  });

  it('fails with the reason when its port is taken', async () => {
    bin = startBin(['--port', '0']);
    const connect = await printed(bin.output, /^ZK_CONNECT=(\S+)$/m, bin.child);
    const second = startBin(['--port', connect.split(':')[1]]);
    expect(await exitOf(second.child)).toBe(1);
    expect(second.output()).toMatch(/port \d+ of 127\.0\.0\.1 is taken .*--port/);
  });

  it('refuses a wrong command line with one line saying what is wrong, the usage, and exit 1', async () => {
    bin = startBin(['--port', '0', '--verbose']);
    const served = printed(bin.output, /^ZK_CONNECT=(\S+)$/m, bin.child).then(
      (connect) => `served on ${connect}`,
      () => 'exited',
    );
    expect(await Promise.race([served, exitOf(bin.child).then(() => 'exited')])).toBe('exited');
    expect(await exitOf(bin.child)).toBe(1);
    expect(bin.output()).toBe(
      'zk-lock-dev-server: unknown argument "--verbose"\n' +
        'usage: zk-lock-dev-server [--port <port>]   (default port 2181; 0 for any free port)\n',
    );
  });

  it('reads --port <n> and --port=<n>, 2181 by default, 0 for any free port', () => {
    expect(parseDevServerArgs([])).toEqual({ kind: 'serve', port: 2181 });
    expect(parseDevServerArgs(['--port', '12181'])).toEqual({ kind: 'serve', port: 12181 });
    expect(parseDevServerArgs(['--port=2182'])).toEqual({ kind: 'serve', port: 2182 });
    expect(parseDevServerArgs(['--port', '0'])).toEqual({ kind: 'serve', port: 0 });
    expect(parseDevServerArgs(['--help'])).toEqual({ kind: 'help' });
  });

  it('refuses an unknown argument and a port that is not a whole number from 0 to 65535', () => {
    const wrong = (args: string[]) => {
      const parsed = parseDevServerArgs(args);
      return parsed.kind === 'wrong' ? parsed.reason : `accepted: ${JSON.stringify(parsed)}`;
    };
    expect(wrong(['--verbose'])).toBe('unknown argument "--verbose"');
    expect(wrong(['2182'])).toBe('unknown argument "2182"');
    expect(wrong(['--port'])).toBe('--port needs a value: a TCP port from 0 to 65535');
    expect(wrong(['--port', ''])).toBe(
      '--port "": not a TCP port (a whole number from 0 to 65535)',
    );
    expect(wrong(['--port='])).toBe('--port "": not a TCP port (a whole number from 0 to 65535)');
    expect(wrong(['--port', 'x'])).toBe(
      '--port "x": not a TCP port (a whole number from 0 to 65535)',
    );
    expect(wrong(['--port=65536'])).toMatch(/^--port "65536": not a TCP port/);
    expect(wrong(['--port', '-1'])).toMatch(/^--port "-1": not a TCP port/);
    expect(wrong(['--port', '21.5'])).toMatch(/^--port "21.5": not a TCP port/);
    expect(wrong(['--port', '0x10'])).toMatch(/^--port "0x10": not a TCP port/);
  });
});
