import { Injectable } from '@nestjs/common';
import type { ZkLockClient } from '../core/lock-client';
import type { ConnectionState } from '../core/types';
import { InjectZkLockClient } from './inject-zk-lock-client.decorator';

/** Same shape as `@nestjs/terminus`'s HealthIndicatorResult (which stays an optional peer). */
export type ZkLockHealthResult = Record<
  string,
  { status: 'up' | 'down'; state: ConnectionState; connectionString: string }
>;

/**
 * Terminus health indicator: up while the ZooKeeper session is connected, down while it is
 * suspended, lost or closed.
 * `this.health.check([() => this.zookeeper.isHealthy('zookeeper')])`
 */
@Injectable()
export class ZkLockHealthIndicator {
  constructor(@InjectZkLockClient() private readonly client: ZkLockClient) {}

  isHealthy(key = 'zookeeper'): ZkLockHealthResult {
    const state = this.client.state;
    const up = state === 'CONNECTED' || state === 'RECONNECTED';
    return {
      [key]: { status: up ? 'up' : 'down', state, connectionString: this.client.connectionString },
    };
  }
}
