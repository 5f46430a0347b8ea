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
    /** The ZooKeeper servers' addresses (with `details: true` only). */
    connectionString?: string;
    /** Each session's id and own state, when the client keeps several (`details: true` only). */
    sessions?: SessionInfo[];
    /** The elections this instance takes part in, by path (`details: true` only). */
    elections?: Record<string, ElectionHealth>;
  }
>;

/** Options of `ZkLockHealthIndicator.isHealthy()`. */
export interface ZkLockHealthOptions {
  /**
   * Add what an operator needs and any other caller must not see (default false): the ZooKeeper
   * address, the sessions' ids and states, the elections and their leaders' ids. Terminus
   * answers and logs the whole result on failure, so set it only on an endpoint that is not
   * public.
   */
  details?: boolean;
}

/**
 * Terminus health indicator: up while the ZooKeeper session is connected (every session, with
 * option `sessions`), down while one is suspended, lost or closed. Any caller sees the status
 * and the connection state only; `details: true` adds each session's state when there are
 * several, the ZooKeeper address, and the application's elections (whether this instance
 * leads, and who does).
 * `this.health.check([() => this.zookeeper.isHealthy('zookeeper')])`
 */
@Injectable()
export class ZkLockHealthIndicator {
  constructor(
    @InjectZkLockClient() private readonly client: ZkLockClient,
    @Optional() private readonly elections?: LeaderElectionService,
  ) {}

  isHealthy(key = 'zookeeper', options: ZkLockHealthOptions = {}): ZkLockHealthResult {
    const state = this.client.state;
    const status = state === 'CONNECTED' || state === 'RECONNECTED' ? 'up' : 'down';
    if (!options.details) return { [key]: { status, state } };
    const elections = this.elections?.healthDetails() ?? {};
    const sessions = this.client.sessions;
    return {
      [key]: {
        status,
        state,
        connectionString: this.client.connectionString,
        ...(sessions.length > 1 ? { sessions } : {}),
        ...(Object.keys(elections).length > 0 ? { elections } : {}),
      },
    };
  }
}
