import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { CLIENT_INTERNALS, type ClientInternals } from '../../core/client/client-internals';
import type { ZkLockClient } from '../../core/client/lock-client';
import { ZooKeeperAuthFailedError } from '../../core/errors';
import type { ConnectionState, SessionInfo } from '../../core/types';
import { ZkLockEventLogger } from './zk-lock.event-logger';
import { vi } from 'vitest';

/** The part of ZkLockClient the logger uses: events and the connection string. */
class FakeClient extends EventEmitter {
  readonly connectionString = 'zk1:2181';
  readonly sessionId = '1000abc';
  readonly namespace = undefined;
  constructor(
    readonly sessions: SessionInfo[] = [{ index: 0, id: '1000abc', state: 'CONNECTED' }],
  ) {
    super();
  }
}

describe('ZkLockEventLogger: connection states', () => {
  const lines: string[] = [];
  let client: FakeClient;
  let logger: ZkLockEventLogger;

  beforeEach(() => {
    lines.length = 0;
    for (const level of ['debug', 'warn', 'error'] as const) {
      vi.spyOn(Logger.prototype, level).mockImplementation(
        (...args: unknown[]) => void lines.push(`${level} ${args[0]}`),
      );
    }
    vi.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined); // the connect line
    client = new FakeClient();
    logger = new ZkLockEventLogger(client as unknown as ZkLockClient);
    logger.start();
  });

  afterEach(() => {
    logger.stop();
    vi.restoreAllMocks();
  });

  const states = (...sequence: ConnectionState[]) => {
    for (const state of sequence) client.emit('state', state);
  };

  it('says "same session" when the session came back after a short outage', () => {
    states('SUSPENDED', 'RECONNECTED');
    expect(lines).toEqual([
      'warn Disconnected from ZooKeeper "zk1:2181": held locks are uncertain until it answers',
      'warn Reconnected to ZooKeeper "zk1:2181" with the same session: held locks are kept',
    ]);
  });

  it('says "new session" for the first connect after a LOST, then "same session" again', () => {
    states('SUSPENDED', 'LOST', 'RECONNECTED', 'SUSPENDED', 'RECONNECTED');
    expect(lines).toEqual([
      'warn Disconnected from ZooKeeper "zk1:2181": held locks are uncertain until it answers',
      'error Session with ZooKeeper "zk1:2181" expired: every held lock is lost',
      'warn Connected to ZooKeeper "zk1:2181" with a new session: locks held before were lost, waiters queue again',
      'warn Disconnected from ZooKeeper "zk1:2181": held locks are uncertain until it answers',
      'warn Reconnected to ZooKeeper "zk1:2181" with the same session: held locks are kept',
    ]);
  });

  it('says "new session" when the state after a LOST is CONNECTED', () => {
    states('LOST', 'CONNECTED');
    expect(lines[1]).toBe(
      'warn Connected to ZooKeeper "zk1:2181" with a new session: locks held before were lost, waiters queue again',
    );
  });

  it('says why when the servers refused the credentials (no "expired", no reconnect)', () => {
    CLIENT_INTERNALS.set(client, {
      connectionFailure: new ZooKeeperAuthFailedError('zk1:2181', 'digest'),
    } as ClientInternals);
    states('LOST');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error ZooKeeper at "zk1:2181" refused this client's "digest"/);
    expect(lines[0]).toMatch(/will not retry.*Every held lock is lost\.$/);
  });

  it('logs a first CONNECTED at debug level', () => {
    states('CONNECTED');
    expect(lines).toEqual(['debug Connection to ZooKeeper "zk1:2181": CONNECTED']);
  });
});

describe('ZkLockEventLogger: several sessions (option sessions)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('names the session that changed, and says only its locks are concerned', () => {
    const lines: string[] = [];
    for (const level of ['log', 'debug', 'warn', 'error'] as const) {
      vi.spyOn(Logger.prototype, level).mockImplementation(
        (...args: unknown[]) => void lines.push(`${level} ${args[0]}`),
      );
    }
    const client = new FakeClient([
      { index: 0, id: 'a0', state: 'CONNECTED' },
      { index: 1, id: 'b1', state: 'CONNECTED' },
    ]);
    const logger = new ZkLockEventLogger(client as unknown as ZkLockClient);
    logger.start();
    const change = (index: number, id: string, state: ConnectionState) => {
      client.emit('session', { index, id, state });
      client.emit('state', state); // the client's own: not logged, the session's line says it
    };
    change(1, 'b1', 'SUSPENDED');
    change(1, 'b1', 'LOST');
    change(1, 'b2', 'RECONNECTED');
    change(0, 'a0', 'SUSPENDED');
    change(0, 'a0', 'RECONNECTED');
    logger.stop();
    expect(lines).toEqual([
      'log Connected to ZooKeeper "zk1:2181" (2 sessions a0, b1)',
      'warn Session 1 (b1) disconnected from ZooKeeper "zk1:2181": its held locks are uncertain until it answers',
      `error Session 1 (b1) with ZooKeeper "zk1:2181" expired: its held locks are lost (the other sessions' are kept)`,
      'warn Session 1 (b2) connected to ZooKeeper "zk1:2181" as a new session: its locks held before were lost, its waiters queue again',
      'warn Session 0 (a0) disconnected from ZooKeeper "zk1:2181": its held locks are uncertain until it answers',
      'warn Session 0 (a0) reconnected to ZooKeeper "zk1:2181": its held locks are kept',
    ]);
  });
});

describe('ZkLockEventLogger: onBusy skips', () => {
  const lines: string[] = [];

  afterEach(() => vi.restoreAllMocks());

  it('logs a skip, the one try before it and a timeout at verbose level (per-lock lines)', () => {
    lines.length = 0;
    for (const level of ['verbose', 'debug', 'warn', 'error'] as const) {
      vi.spyOn(Logger.prototype, level).mockImplementation(
        (...args: unknown[]) => void lines.push(`${level} ${args[0]}`),
      );
    }
    vi.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined); // the connect line
    const client = new FakeClient();
    const logger = new ZkLockEventLogger(client as unknown as ZkLockClient);
    logger.start();
    client.emit('timeout', { path: '/jobs/nightly', waitTimeoutMs: 0 });
    client.emit('skipped', { path: '/jobs/nightly', where: 'Reports.nightly' });
    client.emit('timeout', { path: '/jobs/nightly', waitTimeoutMs: 500 });
    logger.stop();
    expect(lines).toEqual([
      'verbose Tried "/jobs/nightly" once: busy',
      `verbose Skipped Reports.nightly: "/jobs/nightly" is busy (onBusy: 'skip')`,
      'verbose Gave up waiting for "/jobs/nightly" after 500 ms (busy)',
    ]);
  });
});
