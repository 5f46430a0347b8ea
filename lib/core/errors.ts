// The errors this library throws: ZkLockError and its subclasses, each naming what to do.
import { withoutUserInfo } from './connection-string';

/** Base of every error this library throws. */
export class ZkLockError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = this.constructor.name;
  }
}

/**
 * The lock path (after namespacing) is not a valid ZooKeeper path, or a template value is missing.
 * The message shows at most the first 100 characters of a long path (it may come from a request
 * body, and a 400 answer carries the message).
 */
export class InvalidLockPathError extends ZkLockError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`Invalid lock path "${shortenedPath(path)}": ${reason}.`);
  }
}

/**
 * @internal
 * A path as messages and client bodies show it: whole up to SHOWN_PATH_CHARS characters, else
 * its first 100 and its length, so an answer never grows with a value a client sent.
 */
export function shortenedPath(path: string): string {
  return path.length <= SHOWN_PATH_CHARS
    ? path
    : `${path.slice(0, 100)}...(${path.length} characters)`;
}

/** @internal The longest path shown whole (docs/reference/errors.md). */
export const SHOWN_PATH_CHARS = 120;

/**
 * Options that cannot describe a lock (an empty path list, a limit out of range, ...). Thrown
 * before anything is sent to ZooKeeper; `subject` is the lock path, or the call when it has none.
 */
export class InvalidLockOptionsError extends ZkLockError {
  constructor(
    readonly subject: string,
    readonly reason: string,
    hint: string,
  ) {
    super(`Invalid lock options for ${subject}: ${reason}. ${hint}.`);
  }
}

/**
 * The lock cannot be taken in this mode here: a write lock asked for while the same scope holds
 * the path's read lock (an upgrade would wait for itself), or a mutex and a read/write lock on
 * one path (they would not exclude each other). Thrown before anything is sent to ZooKeeper.
 */
export class LockModeError extends ZkLockError {
  constructor(
    readonly path: string,
    readonly reason: string,
    hint: string,
  ) {
    super(`Cannot lock "${path}": ${reason}. ${hint}.`);
  }
}

/**
 * `waitTimeoutMs` elapsed before the lock was acquired; the waiter's node is removed. `advice`
 * fits how the lock was taken (the NestJS decorator gives its own options).
 */
export class LockTimeoutError extends ZkLockError {
  /**
   * At least this many callers were ahead, holding or waiting: `queue.otherNodes +
   * queue.ownCallers` (a node of another process counts one, whatever batch it serves);
   * undefined when its place was not known yet.
   */
  readonly ahead: number | undefined;
  /** Who was ahead in the lock's queue, as far as this process knows (exclusive locks). */
  readonly queue: LockQueueAhead | undefined;

  constructor(
    readonly path: string,
    readonly waitTimeoutMs: number,
    ahead: number | LockQueueAhead | undefined,
    advice = 'Raise waitTimeoutMs, shorten the work done under this lock, or use tryAcquire to skip when busy.',
    options?: { cause?: unknown },
  ) {
    super(
      `Timed out after ${waitTimeoutMs} ms waiting for lock "${path}" (${aheadText(ahead)}). ${advice}`,
      options,
    );
    this.queue = typeof ahead === 'object' ? { ...ahead } : undefined;
    this.ahead = typeof ahead === 'object' ? ahead.otherNodes + ahead.ownCallers : ahead;
  }

  /** @deprecated `ahead` (holders and waiters ahead, not only holders), 0 when not known. */
  get holdersAhead(): number {
    return this.ahead ?? 0;
  }
}

/**
 * `waitTimeoutMs` of `election.whenLeader()` elapsed before this participant led. It stays in the
 * election (its node keeps its place); `ahead` counts the participants ahead of it, the leader
 * included, undefined when its place was not known yet.
 */
export class LeadershipTimeoutError extends LockTimeoutError {
  constructor(path: string, waitTimeoutMs: number, ahead: number | undefined) {
    super(path, waitTimeoutMs, ahead);
    this.message =
      `Timed out after ${waitTimeoutMs} ms waiting for leadership of "${path}" ` +
      `(${participantsAhead(ahead)}). ` +
      'Raise waitTimeoutMs, or listen for the "isLeader" event instead of waiting.';
  }
}

function participantsAhead(ahead: number | undefined): string {
  if (ahead === undefined) return 'its place in line was not known yet';
  return `${ahead} ${ahead === 1 ? 'participant' : 'participants'} ahead of it, the leader included`;
}

/**
 * Who was ahead of a caller in an exclusive lock's queue, as far as its process can know:
 * ZooKeeper shows nodes, and another process may serve a batch of its callers from one node.
 */
export interface LockQueueAhead {
  /** Nodes of other processes ahead of its own, the holder's included. */
  otherNodes: number;
  /** Callers of this process ahead of it, holding or waiting. */
  ownCallers: number;
}

function aheadText(ahead: number | LockQueueAhead | undefined): string {
  if (ahead === undefined) return 'its place in line was not known yet';
  if (typeof ahead === 'number') {
    return `${ahead} ${ahead === 1 ? 'caller' : 'callers'} ahead of it, holding or waiting`;
  }
  const { otherNodes, ownCallers } = ahead;
  const nodes =
    `${otherNodes} queue ${otherNodes === 1 ? 'node' : 'nodes'} of other processes, each one ` +
    "caller or a batch of that process's callers";
  const callers = `${ownCallers} ${ownCallers === 1 ? 'caller' : 'callers'} of this process`;
  if (otherNodes === 0 && ownCallers === 0) return 'nothing ahead of it: it was next';
  if (otherNodes === 0) return `ahead of it: ${callers}, holding or waiting`;
  if (ownCallers === 0) return `ahead of it: ${nodes}`;
  return `ahead of it: ${nodes}, and ${callers}, holding or waiting`;
}

/** The cap of waiting callers a LockQueueFullError hit: on its path, or on the whole client. */
export type WaitersLimitOption = 'maxWaitersPerPath' | 'maxWaiters';

/**
 * Refused at once, nothing sent: `limit` callers of this client already wait for the lock `path`
 * (`option` 'maxWaitersPerPath', both sides of a read/write lock) or for any lock ('maxWaiters').
 */
export class LockQueueFullError extends ZkLockError {
  constructor(
    readonly path: string,
    readonly option: WaitersLimitOption,
    readonly limit: number,
  ) {
    const who =
      option === 'maxWaitersPerPath'
        ? `${limit} callers of this client already wait for it`
        : `${limit} callers of this client already wait for locks`;
    super(
      `Refused to wait for lock "${shortenedPath(path)}": ${who} (${option}: ${limit}). ` +
        `Raise ${option} if that many waiting callers are expected; else the lock is held too ` +
        'long for the load: shorten the work done under it, or bound waits with waitTimeoutMs ' +
        'and shed load before it reaches the lock.',
    );
  }
}

/** The caller's AbortSignal fired while waiting. The waiter's node is removed. */
export class LockAbortedError extends ZkLockError {
  constructor(
    readonly path: string,
    reason: unknown,
  ) {
    super(`Waiting for lock "${path}" was aborted by the caller's signal.`, { cause: reason });
  }
}

export type LockLossReason =
  | 'session-expired'
  | 'connection-lost'
  | 'node-deleted'
  | 'client-closed'
  /** assertHeld() on a handle after its release. */
  | 'released';

/** A held lock is no longer ours: the work done under it must stop (see `lock.signal`). */
export class LockLostError extends ZkLockError {
  constructor(
    readonly path: string,
    readonly reason: LockLossReason,
    detail: string,
  ) {
    super(
      `Lost lock "${path}" (${reason}): ${detail}. Another process may hold it now; ` +
        'stop writing under this lock and retry the whole operation (storage should check the fencing token).',
    );
  }
}

/**
 * What kept the connection from being set up, when known (a TLS handshake the server or this
 * client refused): `reason` says what happened, `hint` what to change.
 */
export interface ConnectFailure {
  reason: string;
  hint: string;
  cause?: unknown;
}

/**
 * ZooKeeper could not be reached, or did not answer in time. `connectionString` (and the message)
 * show the servers without any `user:password@`.
 */
export class ZooKeeperUnavailableError extends ZkLockError {
  readonly connectionString: string;

  constructor(
    connectionString: string,
    readonly timeoutMs: number,
    what: string,
    readonly failure?: ConnectFailure,
  ) {
    super(
      `ZooKeeper at "${withoutUserInfo(connectionString)}" did not answer ${what} within ${timeoutMs} ms` +
        (failure
          ? `: ${failure.reason}. ${failure.hint}.`
          : '. Check that the servers are running and reachable, or raise connectTimeoutMs/requestTimeoutMs.'),
      { cause: failure?.cause },
    );
    this.connectionString = withoutUserInfo(connectionString);
  }
}

/**
 * ZooKeeper answered AUTH_FAILED to the `auth` credentials and closed the session. Not retried
 * (it would fail the same way): every acquire fails with this until a new client connects with
 * credentials the servers accept.
 */
export class ZooKeeperAuthFailedError extends ZkLockError {
  /** The servers, without any `user:password@`. */
  readonly connectionString: string;

  constructor(
    connectionString: string,
    readonly scheme: string,
  ) {
    super(
      `ZooKeeper at "${withoutUserInfo(connectionString)}" refused this client's "${scheme}" credentials ` +
        '(AUTH_FAILED) and closed the session; the client will not retry. Check the `auth` ' +
        'option (each entry "user:password") and that the servers accept digest authentication ' +
        '(a server started with zookeeper.DigestAuthenticationProvider.enabled=false refuses it), ' +
        'then connect a new client.',
    );
    this.connectionString = withoutUserInfo(connectionString);
  }
}

/**
 * ZooKeeper refused a request on a lock's node (NOAUTH): its ACL does not grant this client's
 * identity, typically another application's `acl: 'creator'` node. Not retried.
 */
export class LockAccessDeniedError extends ZkLockError {
  constructor(
    readonly path: string,
    readonly operation: string,
    message = `ZooKeeper refused to ${operation} "${path}" (NOAUTH): the node's ACL does not ` +
      "grant this client's identity. It was created by a client with other credentials " +
      "(acl: 'creator'): connect with the same `auth` credentials as that client, or use " +
      'another namespace or lock path.',
  ) {
    super(message);
  }
}

/**
 * With `acl: 'creator'`, a node the lock relies on grants identities other than this client's,
 * which could delete the holder's node; nothing of ours is left in it. `found` and `expected` are
 * `scheme:id` entries (a digest id without its password hash).
 */
export class UnexpectedAclError extends LockAccessDeniedError {
  constructor(
    path: string,
    readonly found: readonly string[],
    readonly expected: readonly string[],
  ) {
    super(
      path,
      'use',
      `Refusing to use "${path}": its ACL (${found.join(', ') || 'none'}) grants identities ` +
        `other than this client's (${expected.join(', ')}), who could list the contenders and ` +
        "delete the holder's node (acl: 'creator'). Someone without our credentials created " +
        'it: delete it while nobody uses it (zkCli: deleteall <path>), and let no other ' +
        'identity create nodes in the namespace (docs/guides/security.md, "Preparing a ' +
        'namespace"), or use another namespace.',
    );
  }
}

/** The client was closed; no new locks can be taken with it. */
export class ClientClosedError extends ZkLockError {
  constructor(
    readonly path: string,
    action: 'lock' | 'inspect' | 'lead' = 'lock',
  ) {
    super(
      `Cannot ${action} "${path}": the ZkLockClient was closed. Create a new client with ZkLockClient.connect().`,
    );
  }
}

/** A LeaderLatch that was closed cannot start, wait or read again. */
export class ElectionClosedError extends ZkLockError {
  constructor(
    readonly path: string,
    action: string,
  ) {
    super(
      `Cannot ${action} for the election "${path}": this LeaderLatch was closed. ` +
        'Create a new one with client.election() to take part again.',
    );
  }
}
