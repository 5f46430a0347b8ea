// Owns LeaderElectionService: the application's elections, their leaders and their health.
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { hostname } from 'node:os';
import type { Leadership, LeadershipEnd, Participant } from '../../core/recipes/election-types';
import { ZkLockError } from '../../core/errors';
import type { LeaderLatch } from '../../core/recipes/leader-latch';
import type { ZkLockClient } from '../../core/client/lock-client';
import { InjectZkLockClient } from '../decorators/inject-zk-lock-client.decorator';
import type { ZkLockModuleOptions } from '../module/zk-lock-module-options.interface';
import { ZK_LOCK_MODULE_OPTIONS } from '../module/zk-lock.module-definition';

/** What the health indicator shows of one election. */
export interface ElectionHealth {
  /** Whether this instance leads (and can prove it now). */
  leader: boolean;
  /** The leader's participant id as last read (refreshed on every check), null for none. */
  leaderId: string | null;
}

type Hook<E extends 'granted' | 'revoked'> = (
  arg: E extends 'granted' ? Leadership : LeadershipEnd,
) => unknown;

/**
 * The application's elections (docs/recipes/leader-election.md): the paths of `@LeaderElection`
 * methods and leadership hooks, joined at bootstrap with the module's `participantId`, left
 * first at shutdown (onModuleDestroy, before any onApplicationShutdown) so another instance
 * leads within one notification. Ask it who leads, list participants, or step down.
 */
@Injectable()
export class LeaderElectionService implements OnModuleDestroy {
  /** This instance's participant id (module option `participantId`, default `<hostname>:<pid>`). */
  readonly participantId: string;
  private readonly logger = new Logger(LeaderElectionService.name);
  private readonly elections = new Map<string, LeaderLatch>();
  private readonly leaderIds = new Map<string, string | null>();

  constructor(
    @InjectZkLockClient() private readonly client: ZkLockClient,
    @Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions,
  ) {
    this.participantId = options.participantId ?? `${hostname()}:${process.pid}`;
  }

  /** Takes part in the election on `path` (once); resolves once our node has its place in line. */
  async join(path: string): Promise<void> {
    await this.latch(path).start();
    this.refreshLeader(path);
  }

  /** Whether this instance leads `path` now (false for an election it does not take part in). */
  isLeader(path: string): boolean {
    return this.elections.get(path)?.isLeader ?? false;
  }

  /** The leadership of `path` (its signal and fencing token) while this instance leads it. */
  leadership(path: string): Leadership | null {
    return this.elections.get(path)?.leadership ?? null;
  }

  /** Who leads `path` (any participant, Java or Node), or null when nobody takes part. */
  async getLeader(path: string): Promise<Participant | null> {
    return this.reader(path).getLeader();
  }

  /** The participants of `path` in line order. */
  async getParticipants(path: string): Promise<Participant[]> {
    return this.reader(path).getParticipants();
  }

  /** Gives up leadership of `path` and joins again at the back of the line (no-op if not leading). */
  async stepDown(path: string): Promise<void> {
    const election = this.elections.get(path);
    if (!election) {
      throw new ZkLockError(
        `Cannot step down from the election "${path}": this instance does not take part in it. ` +
          `Decorate a method with @LeaderElection('${path}'), or call join('${path}') first.`,
      );
    }
    await election.stepDown();
  }

  /** @internal the explorer's: calls `hook` on each change of our leadership of `path`. */
  addHook<E extends 'granted' | 'revoked'>(path: string, event: E, hook: Hook<E>): void {
    const call = (arg: Leadership | LeadershipEnd): void => {
      try {
        void Promise.resolve((hook as (a: unknown) => unknown)(arg)).catch((err) =>
          this.hookFailed(path, event, err),
        );
      } catch (err) {
        this.hookFailed(path, event, err);
      }
    };
    if (event === 'granted') this.latch(path).on('isLeader', call);
    else this.latch(path).on('notLeader', call);
  }

  /** @internal the health indicator's: each election's state, refreshing the leaders' ids. */
  healthDetails(): Record<string, ElectionHealth> {
    const details: Record<string, ElectionHealth> = {};
    for (const [path, election] of this.elections) {
      const leader = election.isLeader;
      details[path] = {
        leader,
        leaderId: leader ? this.participantId : (this.leaderIds.get(path) ?? null),
      };
      this.refreshLeader(path);
    }
    return details;
  }

  /** Leaves every election first: another instance leads within about one notification. */
  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.elections.values()].map((e) => e.close()));
  }

  private latch(path: string): LeaderLatch {
    let election = this.elections.get(path);
    if (!election) {
      election = this.client.election(path, { participantId: this.participantId });
      election.on('isLeader', (l) => {
        this.leaderIds.set(path, this.participantId);
        this.logger.log(`Leads "${path}" as ${this.participantId} (token ${l.fencingToken})`);
      });
      election.on('notLeader', (end) => {
        this.logger.log(`No longer leads "${path}" as ${this.participantId} (${end.reason})`);
        this.refreshLeader(path);
      });
      this.elections.set(path, election);
    }
    return election;
  }

  /**
   * An election that only reads `path` (no node), whether we take part or not: ours is closed
   * from onModuleDestroy on, while requests still come until the HTTP server closes, and reads
   * through the client work until it closes (then ClientClosedError, 503 as for a lock).
   */
  private reader(path: string): LeaderLatch {
    return this.client.election(path);
  }

  private refreshLeader(path: string): void {
    const election = this.elections.get(path);
    void election
      ?.getLeader()
      .then((leader) => this.leaderIds.set(path, leader?.id ?? null))
      .catch(() => undefined); // closed or unreachable: the last id read stays
  }

  private hookFailed(path: string, event: string, err: unknown): void {
    const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
    this.logger.error(`A leadership-${event} hook of "${path}" failed: ${detail}`);
  }
}
