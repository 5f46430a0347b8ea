import type { ZkLockClient } from '../../core/client/lock-client';
import type { ConnectionState, SessionInfo } from '../../core/types';
import { ZkLockHealthIndicator } from './zk-lock.health';

describe('ZkLockHealthIndicator', () => {
  const one: SessionInfo[] = [{ index: 0, id: 'a0', state: 'CONNECTED' }];

  it.each<[ConnectionState, 'up' | 'down']>([
    ['CONNECTED', 'up'],
    ['RECONNECTED', 'up'],
    ['SUSPENDED', 'down'],
    ['LOST', 'down'],
    ['CLOSED', 'down'],
  ])('reports %s as %s', (state, status) => {
    const client = { state, connectionString: 'zk1:2181', sessions: one } as ZkLockClient;
    expect(new ZkLockHealthIndicator(client).isHealthy('zk')).toEqual({ zk: { status, state } });
    expect(new ZkLockHealthIndicator(client).isHealthy('zk', { details: true })).toEqual({
      zk: { status, state, connectionString: 'zk1:2181' },
    });
  });

  it("is down while one of several sessions is, and lists each session's state in the details", () => {
    const sessions: SessionInfo[] = [
      { index: 0, id: 'a0', state: 'CONNECTED' },
      { index: 1, id: 'b1', state: 'SUSPENDED' },
    ];
    const client = { state: 'SUSPENDED', connectionString: 'zk1:2181', sessions } as ZkLockClient;
    expect(new ZkLockHealthIndicator(client).isHealthy('zk')).toEqual({
      zk: { status: 'down', state: 'SUSPENDED' },
    });
    expect(new ZkLockHealthIndicator(client).isHealthy('zk', { details: true })).toEqual({
      zk: { status: 'down', state: 'SUSPENDED', connectionString: 'zk1:2181', sessions },
    });
  });
});
