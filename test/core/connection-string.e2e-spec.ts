/**
 * A malformed connection string fails `connect()` with InvalidLockOptionsError naming the bad
 * part, in a process that lives on: each string is tried in a child process of its own
 * (fixtures/connect-once.ts), which must report the rejection over IPC and end on its own with
 * exit code 0, its output never showing the password given in the string.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { ZkLockClient } from '../../lib';

const PASSWORD = 'S3cret';

interface Outcome {
  code: number | string;
  output: string;
  reported?: { outcome: string; message?: string };
}

/** Runs fixtures/connect-once.ts with `connectionString`; its exit, output and report. */
function connectOnce(connectionString: string): Promise<Outcome> {
  const child = fork(join(__dirname, 'fixtures', 'connect-once.ts'), [], {
    execArgv: ['-r', require.resolve('ts-node/register/transpile-only')],
    env: {
      ...process.env,
      TS_NODE_PROJECT: join(__dirname, '..', '..', 'tsconfig.json'),
      CONNECTION_STRING: connectionString,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const outcome: Outcome = { code: -1, output: '' };
  child.stdout!.on('data', (chunk) => (outcome.output += chunk));
  child.stderr!.on('data', (chunk) => (outcome.output += chunk));
  child.on('message', (message: Outcome['reported']) => (outcome.reported = message));
  return new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ ...outcome, code: code ?? signal! })),
  );
}

describe('a malformed connection string', () => {
  // Each in its own process, all at once.
  it.concurrent.each([
    [`orders:${PASSWORD}@127.0.0.1:2181`, /server 1 carries user information \("user:password@"\)/],
    ['127.0.0.1:abc', /the port of server 1 \("127\.0\.0\.1"\) is not a number/],
    ['127.0.0.1:99999', /the port of server 1 \("127\.0\.0\.1"\) is 99999, not 1 to 65535/],
    ['zk1:2181,127.0.0.1:0', /the port of server 2 \("127\.0\.0\.1"\) is 0, not 1 to 65535/],
  ])(
    '%s fails connect() with InvalidLockOptionsError, and the process lives on',
    async (connectionString, reason) => {
      const { code, output, reported } = await connectOnce(connectionString);
      expect({ code, reported }).toEqual({
        code: 0,
        reported: { outcome: 'InvalidLockOptionsError', message: expect.stringMatching(reason) },
      });
      expect(`${output}${reported?.message}`).not.toContain(PASSWORD);
    },
  );

  it('fails before anything connects, in this process too', async () => {
    await expect(
      ZkLockClient.connect({ connectionString: `orders:${PASSWORD}@${process.env.ZK_CONNECT}` }),
    ).rejects.toThrow(/connectionString is not "host:port\[,host:port\.\.\.\]\[\/chroot\]"/);
  });
});
