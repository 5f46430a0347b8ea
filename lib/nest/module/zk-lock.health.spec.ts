import type { ZkLockClient } from '../../core/client/lock-client';
import type { ConnectionState } from '../../core/types';
import { ZkLockHealthIndicator } from './zk-lock.health';

describe('ZkLockHealthIndicator', () => {
  it.each<[ConnectionState, 'up' | 'down']>([
    ['CONNECTED', 'up'],
    ['RECONNECTED', 'up'],
    ['SUSPENDED', 'down'],
    ['LOST', 'down'],
    ['CLOSED', 'down'],
  ])('reports %s as %s', (state, status) => {
    const client = { state, connectionString: 'zk1:2181' } as ZkLockClient;
    expect(new ZkLockHealthIndicator(client).isHealthy('zk')).toEqual({
      zk: { status, state, connectionString: 'zk1:2181' },
    });
  });
});
