import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { ZkLockClient } from '../../core/client/lock-client';
import { ZooKeeperAuthFailedError } from '../../core/errors';
import type { ConnectionState } from '../../core/types';
import { ZkLockEventLogger } from './zk-lock.event-logger';
import { vi } from 'vitest';

/** The part of ZkLockClient the logger uses: events and the connection string. */
class FakeClient extends EventEmitter {
  readonly connectionString = 'zk1:2181';
  readonly sessionId = '1000abc';
  readonly namespace = undefined;
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
    (client as unknown as { connectionFailure: object }).connectionFailure =
      new ZooKeeperAuthFailedError('zk1:2181', 'digest');
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
