// Owns ZkLockHealthIndicator: the session's and the elections' state as a Terminus health result.
import { Injectable, Optional } from '@nestjs/common';
import type { ZkLockClient } from '../../core/client/lock-client';
import type { ConnectionState } from '../../core/types';
import { InjectZkLockClient } from '../decorators/inject-zk-lock-client.decorator';
import { ElectionHealth, LeaderElectionService } from '../runtime/leader-election.service';

/** Same shape as `@nestjs/terminus`'s HealthIndicatorResult (which stays an optional peer). */
export type ZkLockHealthResult = Record<
  string,
  {
    status: 'up' | 'down';
    state: ConnectionState;
    connectionString: string;
    /** The elections this instance takes part in, by path (when it takes part in any). */
    elections?: Record<string, ElectionHealth>;
  }
>;

/**
 * Terminus health indicator: up while the ZooKeeper session is connected, down while it is
 * suspended, lost or closed; with the application's elections in the details (whether this
 * instance leads, and who does).
 * `this.health.check([() => this.zookeeper.isHealthy('zookeeper')])`
 */
@Injectable()
export class ZkLockHealthIndicator {
  constructor(
    @InjectZkLockClient() private readonly client: ZkLockClient,
    @Optional() private readonly elections?: LeaderElectionService,
  ) {}

  isHealthy(key = 'zookeeper'): ZkLockHealthResult {
    const state = this.client.state;
    const up = state === 'CONNECTED' || state === 'RECONNECTED';
    const elections = this.elections?.healthDetails() ?? {};
    return {
      [key]: {
        status: up ? 'up' : 'down',
        state,
        connectionString: this.client.connectionString,
        ...(Object.keys(elections).length > 0 ? { elections } : {}),
      },
    };
  }
}
