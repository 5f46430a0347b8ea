// Leader election: LeaderLatch, one participant, laid out like Curator's LeaderLatch, and the
// client's registry of its elections.
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { emitSafely } from '../events';
import {
  ClientClosedError,
  ElectionClosedError,
  InvalidLockOptionsError,
  LeadershipTimeoutError,
  LockAbortedError,
  LockLostError,
} from '../errors';
import {
  documentedError,
  checkWaitTimeout,
  noSessionError,
  WaiterQueue,
} from '../engine/waiter-queue';
import type { Contender } from '../engine/contender';
import type { HeldLock } from '../engine/held-lock';
import { LATCH_DRIVER, sortContenders } from '../engine/lock-drivers';
import type { ZkConnection } from '../zookeeper/zk-connection';
import { isNoNode } from '../zookeeper/zk-errors';
import type { ZkSession } from '../zookeeper/zk-session';
import type {
  ElectionEvents,
  ElectionOptions,
  Leadership,
  LeadershipEnd,
  Participant,
  WhenLeaderOptions,
} from './election-types';

/**
 * How long a participant whose node could not be created again (ZooKeeper unavailable) waits
 * before it tries anew: doubled after each failure up to the cap, reset once it is back in line.
 */
const REJOIN_DELAY_MS = 1_000;
const MAX_REJOIN_DELAY_MS = 8_000;

interface LeaderWaiter {
  led(): void;
  failed(error: Error): void;
}

/**
 * One participant of a leader election, laid out like Curator's LeaderLatch (docs/design.md
 * "Leader election"): leading is holding the first `latch-` node through a WaiterQueue, with a
 * lock's signal, fencing token and loss rules. Events: 'isLeader', 'notLeader'.
 */
export class LeaderLatch extends EventEmitter<ElectionEvents> {
  private queue?: WaiterQueue;
  private starting?: Promise<void>;
  private joining?: { resolve(): void; reject(error: Error): void };
  /** The wait for our node's turn under way (aborted to leave). */
  private wait?: AbortController;
  private node?: Contender;
  private held?: HeldLock;
  private current: Leadership | null = null;
  private readonly leaderWaiters = new Set<LeaderWaiter>();
  private rejoinTimer?: NodeJS.Timeout;
  private rejoinDelayMs = REJOIN_DELAY_MS;
  /** Whether a node of ours has had its place in line: from then on a failed join is retried. */
  private everJoined = false;
  /** Set as close() is called, before leave() tells anyone: their close() gets this promise. */
  private closing?: Promise<void>;

  /** @internal made by ZkLockClient.election() */
  constructor(
    private readonly registry: ElectionRegistry,
    private readonly connection: ZkConnection,
    readonly path: string,
    /** @internal the path with the client's namespace applied */
    readonly lockPath: string,
    readonly participantId: string,
  ) {
    super();
  }

  /**
   * Whether this participant leads and can prove it now: its node is first and its session heard
   * from within the safe window (assertHeld()'s rules; false while suspended).
   */
  get isLeader(): boolean {
    const lock = this.held;
    if (!lock) return false;
    try {
      lock.assertHeld();
    } catch {
      return false;
    }
    return lock.state === 'held';
  }

  /** The current leadership (also while the connection is suspended), or null. */
  get leadership(): Leadership | null {
    return this.held?.active ? this.current : null;
  }

  /** A listener that throws disturbs no election: its error goes to 'error' (emitSafely). */
  override emit<K extends keyof ElectionEvents>(event: K, ...args: ElectionEvents[K]): boolean {
    return emitSafely(this, event, args);
  }

  /**
   * Joins: creates our `latch-` node; resolves once it has its place in line. Rejects with
   * ClientClosedError once the client's close() has begun, without sending anything.
   */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError('start'));
    this.starting ??= this.firstJoin();
    return this.starting;
  }

  /**
   * Resolves with the leadership once this participant leads (joining first if needed). Rejects
   * with LeadershipTimeoutError after `waitTimeoutMs` (join included), LockAbortedError,
   * ElectionClosedError, or the join's error; the participant stays in line.
   */
  whenLeader(options: WhenLeaderOptions = {}): Promise<Leadership> {
    try {
      checkWaitTimeout(this.path, options);
    } catch (err) {
      return Promise.reject(err);
    }
    const { waitTimeoutMs, signal } = options;
    // close() may have come already (or from a 'notLeader' listener): its waiters were told.
    if (this.closed) return Promise.reject(this.closedError('wait'));
    if (this.leadership) return Promise.resolve(this.leadership);
    if (signal?.aborted) return Promise.reject(new LockAbortedError(this.path, signal.reason));
    return new Promise<Leadership>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => waiter.failed(new LockAbortedError(this.path, signal!.reason));
      const end = (): boolean => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        return this.leaderWaiters.delete(waiter);
      };
      const waiter: LeaderWaiter = {
        led: () => {
          if (end()) resolve(this.current!);
        },
        failed: (error) => {
          if (end()) reject(error);
        },
      };
      // Waiting before the join: close() tells it, and the time counts from now, not from the
      // join's end (up to connectTimeoutMs while ZooKeeper is unreachable).
      this.leaderWaiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (waitTimeoutMs !== undefined) {
        timer = setTimeout(() => waiter.failed(this.timeoutError(waitTimeoutMs)), waitTimeoutMs);
      }
      this.start().then(
        () => {
          if (this.leadership) waiter.led();
        },
        (err: Error) => waiter.failed(err),
      );
    });
  }

  /**
   * Gives leadership up (if leading) and joins again at the back: the signal aborts, our node is
   * deleted (the next participant leads), a new one is created. Rejects when it cannot be (e.g.
   * ZooKeeperUnavailableError); the participant keeps trying to join.
   */
  async stepDown(): Promise<void> {
    const lock = this.held;
    if (!lock || this.closed) return;
    this.endLeadership(lock, 'stepped-down', 'leadership was given up by stepDown()');
    await lock.end();
    if (!this.closed) await this.join();
  }

  /** Leaves: the signal aborts, our node is deleted, so the next participant leads at once. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    let settle!: (left: Promise<void>) => void;
    this.closing = new Promise<void>((resolve) => (settle = resolve));
    settle(this.leave());
    return this.closing;
  }

  /** The participant that leads now (the first node's id), or null when nobody takes part. */
  async getLeader(): Promise<Participant | null> {
    return (await this.getParticipants())[0] ?? null;
  }

  /** Every participant, Java or Node, in line order, with its id. */
  async getParticipants(): Promise<Participant[]> {
    if (this.closed) throw this.closedError('read the participants');
    const connection = this.connection;
    const session = await connection.ready().catch((err: unknown) => {
      throw noSessionError(err, this.path);
    });
    return readParticipants(session, this.lockPath).catch((err: unknown) => {
      throw documentedError(err, this.path, connection);
    });
  }

  // ---- session events, routed by the client -------------------------------------------------

  /** @internal */
  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    this.queue?.onSessionLost(session, reason);
  }

  /** @internal */
  onSuspended(session: ZkSession): void {
    this.queue?.onSuspended(session);
  }

  /** @internal */
  onReconnected(session: ZkSession): void {
    this.queue?.onReconnected(session);
  }

  // ---- internals ----------------------------------------------------------------------------

  private get closed(): boolean {
    return this.closing !== undefined;
  }

  private async firstJoin(): Promise<void> {
    this.registry.started(this); // first: a closing client refuses before anything is made
    // One node at a time, always watched for deletion (a leader must hear of it); its place in
    // line resolves start().
    const context = {
      connection: this.connection,
      nodeData: Buffer.from(this.participantId, 'utf8'),
      maxNodesPerPath: 1,
      watchesLoss: () => true,
      released: () => undefined,
      lost: (lock: HeldLock) => this.lost(lock),
      placed: (node: Contender) => {
        if (node.name && node.predecessor !== undefined && !node.isGone) this.joined(node);
      },
    };
    this.queue ??= new WaiterQueue(
      context,
      () => undefined,
      this.lockPath,
      this.path,
      LATCH_DRIVER,
    );
    try {
      await this.join();
    } catch (err) {
      this.starting = undefined; // start() may be called again
      throw err;
    }
  }

  /** Queues a node of ours; resolves once it has its place in line. */
  private join(): Promise<void> {
    const wait = new AbortController();
    this.wait = wait;
    const joined = new Promise<void>((resolve, reject) => (this.joining = { resolve, reject }));
    this.queue!.acquire({ signal: wait.signal }).then(
      (lock) => this.granted(lock, wait),
      (err: Error) => this.notGranted(err, wait),
    );
    return joined;
  }

  private joined(node: Contender): void {
    this.node = node;
    this.backInLine();
    const joining = this.joining;
    this.joining = undefined;
    joining?.resolve();
  }

  private granted(lock: HeldLock, wait: AbortController): void {
    if (this.wait === wait) this.wait = undefined;
    if (this.closed) return void lock.end();
    this.backInLine();
    this.joining?.resolve();
    this.joining = undefined;
    // Lost between the grant and this turn: never told as leading, so not told as lost either.
    if (!lock.active) return this.rejoinAfter(lock);
    this.held = lock;
    this.current = {
      path: this.path,
      participantId: this.participantId,
      fencingToken: lock.fencingToken,
      signal: lock.signal,
    };
    for (const waiter of [...this.leaderWaiters]) waiter.led();
    this.emit('isLeader', this.current);
  }

  private notGranted(err: Error, wait: AbortController): void {
    if (this.wait === wait) this.wait = undefined;
    if (this.closed || wait.signal.aborted) return;
    const joining = this.joining;
    this.joining = undefined;
    joining?.reject(err); // start() or stepDown() fails with it
    // The first join failed: start() rejects and may be called again.
    if (!this.everJoined) return;
    // Out of line (after a loss or a step-down, ZooKeeper unavailable): keep trying until a node
    // of ours is back in line or the election is closed. Nothing is told: 'notLeader' follows an
    // 'isLeader' only, once (the client's 'state' events tell the outage).
    const delay = this.rejoinDelayMs;
    this.rejoinDelayMs = Math.min(delay * 2, MAX_REJOIN_DELAY_MS);
    clearTimeout(this.rejoinTimer);
    this.rejoinTimer = setTimeout(() => {
      this.rejoinTimer = undefined;
      if (!this.closed) this.join().catch(() => undefined); // a failure schedules the next try
    }, delay);
  }

  /** A node of ours has its place in line: a later failure to join again is retried. */
  private backInLine(): void {
    this.everJoined = true;
    this.rejoinDelayMs = REJOIN_DELAY_MS;
  }

  /** Our leadership was lost (session, node deleted): tell, then join again with a new node. */
  private lost(lock: HeldLock): void {
    if (this.held !== lock) return; // given up on purpose, told already
    const error = lock.signal.reason as LockLostError;
    this.held = undefined;
    this.current = null;
    this.emit('notLeader', { reason: 'lost', error });
    this.rejoinAfter(lock);
  }

  /** Deletes the lost node if it still exists, then joins again with a new one. */
  private rejoinAfter(lock: HeldLock): void {
    void lock.end().then(() => {
      if (!this.closed) return this.join().catch(() => undefined);
    });
  }

  /** Ends our leadership on purpose: the signal aborts first, then 'notLeader' is told. */
  private endLeadership(lock: HeldLock, reason: LeadershipEnd['reason'], detail: string): void {
    this.held = undefined;
    this.current = null;
    lock.lose('released', detail);
    this.emit('notLeader', { reason });
  }

  private async leave(): Promise<void> {
    clearTimeout(this.rejoinTimer);
    this.wait?.abort();
    this.wait = undefined;
    const closed = this.closedError('wait');
    this.joining?.reject(closed);
    this.joining = undefined;
    for (const waiter of [...this.leaderWaiters]) waiter.failed(closed);
    const lock = this.held;
    if (lock) {
      this.endLeadership(lock, 'closed', 'the election was closed');
      await lock.end();
    }
    await this.queue?.whenIdle();
    if (this.queue) this.registry.closed(this);
  }

  private timeoutError(waitTimeoutMs: number): LeadershipTimeoutError {
    const node = this.node;
    const ahead = node && node.predecessor !== undefined ? node.ahead : undefined;
    return new LeadershipTimeoutError(this.path, waitTimeoutMs, ahead);
  }

  private closedError(action: string): ElectionClosedError {
    return new ElectionClosedError(this.path, action);
  }
}

/** Node data stays far below jute.maxbuffer, and an id is a name, not a payload. */
export const MAX_PARTICIPANT_ID_BYTES = 1024;

/**
 * Throws InvalidLockOptionsError for `subject` (the election's path, or the module whose option
 * it is, which checks it before anything connects) unless `id` can be a participant id.
 */
export function checkParticipantId(subject: string, id: unknown): asserts id is string {
  if (typeof id === 'string' && Buffer.byteLength(id) <= MAX_PARTICIPANT_ID_BYTES) return;
  throw new InvalidLockOptionsError(
    subject,
    `participantId must be a string of at most ${MAX_PARTICIPANT_ID_BYTES} bytes, got ${describe(id)}`,
    'Give a short name of this instance, or leave it out for <hostname>:<pid>',
  );
}

/**
 * @internal
 * The client's elections that take part now: their session events, whether a path is theirs
 * (kept from cleanup), and leaving them all first when the client closes.
 */
export class ElectionRegistry {
  private readonly running = new Set<LeaderLatch>();
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
    const id: unknown = options?.participantId ?? `${hostname()}:${process.pid}`;
    checkParticipantId(path, id);
    return new LeaderLatch(this, this.connectionOf(lockPath), path, lockPath, id);
  }

  /** An election joins: session events reach it, its path is kept; ClientClosedError if closing. */
  started(election: LeaderLatch): void {
    if (this.closing) throw new ClientClosedError(election.path, 'lead');
    this.running.add(election);
  }

  /** An election left: its path may be cleaned up. */
  closed(election: LeaderLatch): void {
    this.running.delete(election);
    if (!this.has(election.lockPath)) this.onPathLeft(election.lockPath);
  }

  has(lockPath: string): boolean {
    for (const election of this.running) if (election.lockPath === lockPath) return true;
    return false;
  }

  /**
   * Leaves every election (their next participants lead at once). None starts from then on, not
   * even from a listener this runs: it would join, and lead, on a client being closed.
   */
  closeAll(): Promise<void> {
    this.closing = true;
    return Promise.all([...this.running].map((e) => e.close())).then(() => undefined);
  }

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    for (const election of this.running) election.onSessionLost(session, reason);
  }

  onSuspended(session: ZkSession): void {
    for (const election of this.running) election.onSuspended(session);
  }

  onReconnected(session: ZkSession): void {
    for (const election of this.running) election.onReconnected(session);
  }
}

function describe(id: unknown): string {
  return typeof id === 'string' ? `${Buffer.byteLength(id)} bytes` : typeof id;
}

/**
 * The participants at `lockPath` in line order with their ids, as Curator LeaderLatch's
 * getParticipants() (every child counts, the first leads); a node gone meanwhile is left out.
 */
export async function readParticipants(
  session: ZkSession,
  lockPath: string,
): Promise<Participant[]> {
  const children = await session.getChildren(lockPath).then(
    (listing) => listing.children,
    (err) => (isNoNode(err) ? [] : Promise.reject(err)),
  );
  const ids = await Promise.all(
    sortContenders(children).map((name) =>
      session.getData(`${lockPath}/${name}`).then(
        ({ data }) => data?.toString('utf8') ?? '',
        (err) => (isNoNode(err) ? undefined : Promise.reject(err)),
      ),
    ),
  );
  return ids
    .filter((id): id is string => id !== undefined)
    .map((id, i) => ({ id, isLeader: i === 0 }));
}
