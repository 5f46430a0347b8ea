/** Owns the client's sessions: one ZkConnection per member, and the client's state from theirs. */
import { EventEmitter } from 'node:events';
import type { ConnectionState, SessionInfo } from '../types';
import {
  type ConnectFailure,
  type ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
} from '../errors';
import { ZkConnection, ZkConnectionOptions } from './zk-connection';
import { RoundTrips } from './zk-wire';
import { sessionIndexOf } from './session-shards';

/**
 * The client's sessions (docs/design.md "Sessions as a pool"): `size` ZkConnections, each keeping
 * one live session, and the one every lock path uses (connectionOf). Its state is the whole
 * client's: CONNECTED once every member is, SUSPENDED or LOST while any member is (LOST first),
 * RECONNECTED when every member is back. Events: 'state' (the client's state, when it changes)
 * and 'member' (SessionInfo: a member's own state changed).
 */
export class SessionPool extends EventEmitter {
  state: ConnectionState;
  private closing = false;

  private constructor(
    readonly members: readonly ZkConnection[],
    /** How long its requests take to be answered, from the replies of every member's sessions. */
    readonly roundTrips: RoundTrips,
  ) {
    super();
    this.setMaxListeners(0);
    this.state = clientState(this.memberStates(), false);
    members.forEach((member, index) => {
      member.on('state', (state: ConnectionState) => {
        if (this.closing) return;
        this.emit('member', { index, id: member.current.id, state } satisfies SessionInfo);
        const next = clientState(this.memberStates(), true);
        if (next === this.state) return;
        this.state = next;
        this.emit('state', next);
      });
    });
  }

  /**
   * Connects `size` sessions at once; when any fails, closes the others and rejects with its
   * error (ZooKeeperUnavailableError, InvalidLockOptionsError) as one session would, the
   * unavailable error saying how many connected and naming maxClientCnxns when `size` > 1.
   */
  static async open(options: ZkConnectionOptions, size: number): Promise<SessionPool> {
    const roundTrips = new RoundTrips();
    const opened = await Promise.allSettled(
      Array.from({ length: size }, () => ZkConnection.open({ ...options, roundTrips })),
    );
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    const members = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    if (failed) {
      await Promise.all(members.map((m) => m.close()));
      throw size > 1 ? poolUnavailable(failed.reason, members.length, size) : failed.reason;
    }
    return new SessionPool(members, roundTrips);
  }

  /**
   * The index of the member whose session `lockPath` (namespace applied) uses: always the same,
   * as session-shards.ts picks it (the queue registry picks its context with the same function).
   */
  indexOf(lockPath: string): number {
    return sessionIndexOf(lockPath, this.members.length);
  }

  /** The member whose session `lockPath` uses. */
  connectionOf(lockPath: string): ZkConnection {
    return this.members[this.indexOf(lockPath)];
  }

  /** Every member's current session and state, in member order. */
  get sessions(): SessionInfo[] {
    return this.members.map((m, index) => ({ index, id: m.current.id, state: m.state }));
  }

  /** Why a member gave up for good (the servers refused our credentials), if one did. */
  get failure(): ZooKeeperAuthFailedError | undefined {
    return this.members.find((m) => m.failure)?.failure;
  }

  /** Closes every member; the client's state is CLOSED once all are. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.members.map((m) => m.close()));
    if (this.state !== 'CLOSED') {
      this.state = 'CLOSED';
      this.emit('state', 'CLOSED');
    }
    this.removeAllListeners();
  }

  private memberStates(): ConnectionState[] {
    return this.members.map((m) => m.state);
  }
}

/**
 * @internal
 * The client's state from its sessions' states: the worst of them (LOST, then SUSPENDED); once
 * all are up, CONNECTED the first time and RECONNECTED after (`wasUp`), as Curator says of one.
 * With one session, its own state.
 */
export function clientState(states: readonly ConnectionState[], wasUp: boolean): ConnectionState {
  if (states.includes('LOST')) return 'LOST';
  if (states.includes('SUSPENDED')) return 'SUSPENDED';
  return wasUp ? 'RECONNECTED' : 'CONNECTED';
}

/**
 * The first connect of a pool failed. When some sessions connected, or none did and the servers
 * closed the connections themselves, the error says how many connected and names the servers'
 * maxClientCnxns, the limit a server over it enforces that way (`size` sessions are `size`
 * connections). A known reason (a DNS name, a refused port, a TLS handshake) and any other error
 * are given as one session gives them.
 */
function poolUnavailable(err: unknown, connected: number, size: number): unknown {
  if (!(err instanceof ZooKeeperUnavailableError)) return err;
  if (connected === 0 && !closedByServer(err.failure)) return err;
  const limit =
    `with sessions: ${size}, each instance opens ${size} connections, and a server refuses a ` +
    "client IP address's connections beyond its maxClientCnxns (60 by default): lower the " +
    'sessions option or raise maxClientCnxns on the servers';
  return new ZooKeeperUnavailableError(
    err.connectionString,
    err.timeoutMs,
    `${size - connected} of this client's ${size} session requests`,
    {
      reason: err.failure?.reason ?? `${connected} of the ${size} sessions connected`,
      hint: `${err.failure?.hint ?? 'Check that the servers are running and reachable, or raise connectTimeoutMs'}; ${limit}`,
      cause: err.failure?.cause ?? err,
    },
  );
}

/** No reason known, or the server ended the connection itself (reset, or closed at once). */
function closedByServer(failure: ConnectFailure | undefined): boolean {
  const code = (failure?.cause as { code?: unknown } | undefined)?.code;
  return failure === undefined || code === 'ECONNRESET' || code === 'EPIPE';
}
