/**
 * docs/design.md "The connection layer": a reply node-zookeeper-client cannot parse (here a
 * ReplyHeader whose err code is missing from its table) throws inside its socket data handler.
 * ZkSession's guard drops the socket instead of letting that crash the process; the session
 * reconnects (same session id).
 * The request that reply was for ends in doubt when its timeout passes (REQUEST_TIMEOUT); one
 * sent behind it ends in doubt at once (CONNECTION_LOSS).
 * A real ZooKeeper does not send such codes on demand, so a FakeZooKeeper sends one; the client
 * runs in a child process so a crash shows as its exit code.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ZkCode } from '../../lib/core/zookeeper/zk-errors';
import type { UnparsableReplyReport } from './fixtures/unparsable-reply-client';
import { FakeZooKeeper } from './support/fake-zookeeper';
import { scaled } from '../support/time-scale';

const UNKNOWN_CODE = -999;
const GET_DATA = 4;
const CLOSE_SESSION = -11;

interface Run {
  exit: number | string;
  stdout: string;
  stderr: string;
}

/** Runs fixtures/unparsable-reply-client.ts; kills it if it has not exited within 20 s. */
function runClient(client: 'zk-session' | 'raw', connectionString: string): Promise<Run> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      require.resolve('ts-node/register/transpile-only'),
      join(__dirname, 'fixtures', 'unparsable-reply-client.ts'),
    ],
    {
      env: {
        ...process.env,
        TS_NODE_PROJECT: join(__dirname, '..', '..', 'tsconfig.json'),
        ZK_CONNECT: connectionString,
        CLIENT: client,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const stuck = setTimeout(() => {
    stderr += '\n[killed: still running 20 s after start, a handle was left open]';
    child.kill('SIGKILL');
  }, scaled(20_000));
  return new Promise((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(stuck);
      resolve({ exit: code ?? signal!, stdout, stderr });
    }),
  );
}

function reportOf(run: Run): UnparsableReplyReport {
  const line = run.stdout.split('\n').find((l) => l.startsWith('REPORT '));
  if (!line) throw new Error(`no report (exit ${run.exit}); stderr:\n${run.stderr}`);
  return JSON.parse(line.slice('REPORT '.length));
}

describe('a reply node-zookeeper-client cannot parse', () => {
  let server: FakeZooKeeper;

  beforeEach(async () => {
    server = await FakeZooKeeper.start(UNKNOWN_CODE);
  });

  afterEach(() => server.close());

  it('crashes a bare node-zookeeper-client (control: the fake server does trigger the throw)', async () => {
    const run = await runClient('raw', server.connectionString);

    expect(run.exit).not.toBe(0);
    expect(run.stderr).toContain(`Unknown code: ${UNKNOWN_CODE}`);
    expect(run.stdout).not.toContain('callback');
    expect(server.requests).toEqual([{ connection: 1, xid: 0, type: GET_DATA, err: UNKNOWN_CODE }]);
  });

  it('drops the socket instead: no crash, same session reconnected, the request ends in doubt', async () => {
    const run = await runClient('zk-session', server.connectionString);

    expect(run.stderr).not.toContain('Unknown code');
    expect(run.exit).toBe(0);
    const report = reportOf(run);
    expect(report.poisoned).toEqual({
      code: ZkCode.REQUEST_TIMEOUT,
      inDoubt: true,
      message: 'ZooKeeper getData "/unparsable" got no answer within 1500 ms',
    });
    expect(report.behind).toEqual({
      code: ZkCode.CONNECTION_LOSS,
      inDoubt: true,
      message: 'ZooKeeper getData "/behind": Exception: CONNECTION_LOSS[-4]',
    });
    expect(report.idAfter).toBe(report.idBefore);
    expect(report.stateAfter).toBe('connected');
    expect(report.nextCode).toBe(ZkCode.NO_NODE);
    expect(report.events).toEqual(['connected', 'suspended', 'reconnected', 'closed']);
    expect(report.stateClosed).toBe('closed');

    const id = report.idBefore;
    expect(server.handshakes).toEqual([
      { requested: '0', granted: id },
      { requested: id, granted: id },
    ]);
    expect(server.requests).toEqual([
      { connection: 1, xid: 0, type: GET_DATA, err: UNKNOWN_CODE },
      { connection: 1, xid: 1, type: GET_DATA, err: ZkCode.NO_NODE }, // answered, never read
      { connection: 2, xid: 2, type: GET_DATA, err: ZkCode.NO_NODE },
      { connection: 2, xid: 3, type: CLOSE_SESSION, err: 0 },
    ]);
  });
});
