// Owns ZkLockHealthIndicator: the session's and the elections' state as a Terminus health result.
import { Injectable, Optional } from '@nestjs/common';
import type { ZkLockClient } from '../../core/client/lock-client';
import type { ConnectionState, SessionInfo } from '../../core/types';
import { InjectZkLockClient } from '../decorators/inject-zk-lock-client.decorator';
import { ElectionHealth, LeaderElectionService } from '../runtime/leader-election.service';

/** Same shape as `@nestjs/terminus`'s HealthIndicatorResult (which stays an optional peer). */
export type ZkLockHealthResult = Record<
  string,
  {
    status: 'up' | 'down';
    state: ConnectionState;
    connectionString: string;
    /** Each session's id and own state, when the client keeps several (option `sessions`). */
    sessions?: SessionInfo[];
    /** The elections this instance takes part in, by path (when it takes part in any). */
    elections?: Record<string, ElectionHealth>;
  }
>;

/**
 * Terminus health indicator: up while the ZooKeeper session is connected (every session, with
 * option `sessions`), down while one is suspended, lost or closed; with each session's state when
 * there are several, and the application's elections in the details (whether this instance
 * leads, and who does).
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
    const sessions = this.client.sessions;
    return {
      [key]: {
        status: up ? 'up' : 'down',
        state,
        connectionString: this.client.connectionString,
        ...(sessions.length > 1 ? { sessions } : {}),
        ...(Object.keys(elections).length > 0 ? { elections } : {}),
      },
    };
  }
}
