/**
 * docs/design.md "The connection layer": a reply the wire cannot read (here a getData answered
 * with a bare ReplyHeader, no data and no Stat) never crashes the process: the wire drops the
 * connection and the session reconnects (same session id). The request that reply was for, and
 * one sent behind it, end in doubt at once (CONNECTION_LOSS). An error code no ZooKeeper
 * release defines is an answer like any other: its request fails with that code, not in doubt,
 * and the connection stays.
 * A real ZooKeeper sends neither on demand, so a FakeZooKeeper does; the client runs in a child
 * process so a crash shows as its exit code.
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
function runClient(connectionString: string, reconnect: boolean): Promise<Run> {
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
        RECONNECT: reconnect ? '1' : '0',
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

describe('a reply the wire cannot read', () => {
  let server: FakeZooKeeper;

  beforeEach(async () => {
    server = await FakeZooKeeper.start(0); // success, without the payload a getData reply has
  });

  afterEach(() => server.close());

  it('drops the connection instead: no crash, same session reconnected, the requests in doubt', async () => {
    const run = await runClient(server.connectionString, true);

    expect(run.exit).toBe(0);
    const report = reportOf(run);
    expect(report.poisoned).toEqual({
      code: ZkCode.CONNECTION_LOSS,
      inDoubt: true,
      message: 'ZooKeeper getData "/unparsable": CONNECTION_LOSS[-4]',
    });
    expect(report.behind).toEqual({
      code: ZkCode.CONNECTION_LOSS,
      inDoubt: true,
      message: 'ZooKeeper getData "/behind": CONNECTION_LOSS[-4]',
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
      { connection: 1, xid: 0, type: GET_DATA, err: 0 },
      { connection: 1, xid: 1, type: GET_DATA, err: ZkCode.NO_NODE }, // answered, never read
      { connection: 2, xid: 2, type: GET_DATA, err: ZkCode.NO_NODE },
      { connection: 2, xid: 3, type: CLOSE_SESSION, err: 0 },
    ]);
  });
});

describe('an error code no ZooKeeper release defines', () => {
  let server: FakeZooKeeper;

  beforeEach(async () => {
    server = await FakeZooKeeper.start(UNKNOWN_CODE);
  });

  afterEach(() => server.close());

  it('fails its request with that code, not in doubt; the connection stays', async () => {
    const run = await runClient(server.connectionString, false);

    expect(run.exit).toBe(0);
    const report = reportOf(run);
    expect(report.poisoned).toEqual({
      code: UNKNOWN_CODE,
      inDoubt: false,
      message: `ZooKeeper getData "/unparsable": UNKNOWN_CODE[${UNKNOWN_CODE}]`,
    });
    expect(report.behind).toEqual({
      code: ZkCode.NO_NODE,
      inDoubt: false,
      message: 'ZooKeeper getData "/behind": NO_NODE[-101]',
    });
    expect(report.events).toEqual(['connected', 'closed']);
    expect(server.handshakes).toHaveLength(1);
    expect(server.requests).toEqual([
      { connection: 1, xid: 0, type: GET_DATA, err: UNKNOWN_CODE },
      { connection: 1, xid: 1, type: GET_DATA, err: ZkCode.NO_NODE },
      { connection: 1, xid: 2, type: GET_DATA, err: ZkCode.NO_NODE },
      { connection: 1, xid: 3, type: CLOSE_SESSION, err: 0 },
    ]);
  });
});
