// The public types of leader elections (ZkLockClient.election()).
/** Options of `ZkLockClient.election(path, options)`. */
export interface ElectionOptions {
  /**
   * Who this participant is, stored as its node's data (UTF-8), as Curator's LeaderLatch does:
   * `getLeader()` and `getParticipants()` of every client, Java or Node, show it. Default
   * `<hostname>:<pid>`.
   */
  participantId?: string;
}

/**
 * This participant leads, held like a lock: `signal` aborts (LockLostError) when leadership may
 * be lost or is given up (stepDown(), close()); `fencingToken` is greater than every earlier
 * leader's on this path, for storage to refuse a deposed leader's writes.
 */
export interface Leadership {
  readonly path: string;
  readonly participantId: string;
  readonly fencingToken: bigint;
  readonly signal: AbortSignal;
}

/** One participant of an election, in line order (the first leads). */
export interface Participant {
  /** Its node's data: the participant id (Curator's LeaderLatch id). */
  readonly id: string;
  readonly isLeader: boolean;
}

/**
 * Why leadership ended: stepDown(), the loss of our node or session, or close(). Told once after
 * each 'isLeader', never to a participant that did not lead.
 */
export interface LeadershipEnd {
  readonly reason: 'stepped-down' | 'lost' | 'closed';
  /** With reason 'lost': the LockLostError of the loss. */
  readonly error?: Error;
}

/** Options of `election.whenLeader()`. */
export interface WhenLeaderOptions {
  /**
   * Give up with a LeadershipTimeoutError this long after the call, the join included (default:
   * wait as long as it takes).
   */
  waitTimeoutMs?: number;
  /** Give up with a LockAbortedError when this aborts. */
  signal?: AbortSignal;
}

/** The events of a LeaderLatch. */
export interface ElectionEvents {
  /** This participant leads. */
  isLeader: [leadership: Leadership];
  /** After an 'isLeader', once. */
  notLeader: [end: LeadershipEnd];
  /**
   * A listener of this election's events threw this; the election went on as if it had not.
   * Without an 'error' listener, it is thrown on its own as an uncaught exception.
   */
  error: [error: unknown];
}
