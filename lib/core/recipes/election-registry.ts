// The client's elections: their session events, their paths kept from cleanup, closing them.
import { hostname } from 'node:os';
import { ClientClosedError, InvalidLockOptionsError } from '../errors';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import type { ElectionOptions } from './election-types';
import { LeaderLatch } from './leader-latch';

/** Node data stays far below jute.maxbuffer, and an id is a name, not a payload. */
const MAX_PARTICIPANT_ID_BYTES = 1024;

/**
 * The client's elections that take part now: their session events, whether a path is theirs
 * (kept from cleanup), and leaving them all first when the client closes.
 */
export class ElectionRegistry {
  private readonly started = new Set<LeaderLatch>();
  /** closeAll() has begun: an election made earlier can no longer start (ClientClosedError). */
  private closing = false;

  constructor(
    /** The connection whose session a lock path uses. */
    private readonly connectionOf: (lockPath: string) => ZkConnection,
    /** An election left its path: clean it up once idle (docs/design.md "The mutex recipe"). */
    private readonly onPathLeft: (lockPath: string) => void,
  ) {}

  /** A new election; throws InvalidLockOptionsError for a participant id that cannot be one. */
  open(path: string, lockPath: string, options: ElectionOptions): LeaderLatch {
    const id = options?.participantId ?? `${hostname()}:${process.pid}`;
    if (typeof id !== 'string' || Buffer.byteLength(id) > MAX_PARTICIPANT_ID_BYTES) {
      throw new InvalidLockOptionsError(
        path,
        `participantId must be a string of at most ${MAX_PARTICIPANT_ID_BYTES} bytes, got ${describe(id)}`,
        'Pass a short name of this instance (the default is <hostname>:<pid>)',
      );
    }
    const host = {
      connection: this.connectionOf(lockPath),
      onStarted: (election: LeaderLatch) => {
        if (this.closing) throw new ClientClosedError(election.path, 'lead');
        this.started.add(election);
      },
      onClosed: (election: LeaderLatch) => {
        this.started.delete(election);
        if (!this.has(election.lockPath)) this.onPathLeft(election.lockPath);
      },
    };
    return new LeaderLatch(host, path, lockPath, id);
  }

  has(lockPath: string): boolean {
    for (const election of this.started) if (election.lockPath === lockPath) return true;
    return false;
  }

  /**
   * Leaves every election (their next participants lead at once). None starts from then on, not
   * even from a listener this runs: it would join, and lead, on a client being closed.
   */
  closeAll(): Promise<void> {
    this.closing = true;
    return Promise.all([...this.started].map((e) => e.close())).then(() => undefined);
  }

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    for (const election of this.started) election.onSessionLost(session, reason);
  }

  onSuspended(session: ZkSession): void {
    for (const election of this.started) election.onSuspended(session);
  }

  onReconnected(session: ZkSession): void {
    for (const election of this.started) election.onReconnected(session);
  }
}

function describe(id: unknown): string {
  return typeof id === 'string' ? `${Buffer.byteLength(id)} bytes` : typeof id;
}
