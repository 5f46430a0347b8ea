// When a semaphore acquire's caller stops waiting: its abort, close(), or its deadline.
import { ClientClosedError, LockAbortedError } from '../errors';
import { waitTimeoutError } from '../queue/wait-errors';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { SessionEnded } from './semaphore-watch';

/**
 * @internal
 * The end of one semaphore acquire's wait, whichever comes first: its signal aborts
 * (LockAbortedError), the client closes (ClientClosedError), or its deadline passes while it
 * waits (LockTimeoutError; ZooKeeperUnavailableError without a connected session, as for a
 * lock). Like Curator's, the deadline bounds waiting, for room or for the
 * connection, not the requests of an acquire that finds room: once past, the next wait ends at
 * once. `error` is set synchronously as the end comes, so a grant checked after it takes no
 * lease.
 *
 * The caller is answered by the end even while the acquire's requests are stuck in an outage
 * (a create in doubt waits for the reconnect or the session's end to find its node): the
 * acquire then finishes in the background and deletes what it created (docs/design.md "The lock
 * family").
 */
export class WaitEnd {
  /** Why the caller stopped waiting; undefined while it waits. */
  error?: Error;
  /** How many are ahead by the last listing: for the timeout's message. */
  ahead?: number;
  private readonly stops = new Set<(err: Error) => void>();
  private timer?: NodeJS.Timeout;
  private overdue = false;
  private waits = 0;

  constructor(
    private readonly w: {
      path: string;
      deadline?: number;
      waitTimeoutMs?: number;
      signal?: AbortSignal;
    },
    private readonly closed: AbortSignal,
    /** The connection of the semaphore's session: tells a busy semaphore from an outage. */
    private readonly connection: ZkConnection,
  ) {
    w.signal?.addEventListener('abort', this.onAbort, { once: true });
    closed.addEventListener('abort', this.onClose, { once: true });
    if (w.deadline !== undefined) {
      this.timer = setTimeout(this.onDeadline, Math.max(0, w.deadline - Date.now()));
    }
    // Fired before we listened: an event added now would never come.
    if (w.signal?.aborted) this.onAbort();
    else if (closed.aborted) this.onClose();
  }

  /** Throws the end, if it came. */
  check(): void {
    if (this.error) throw this.error;
  }

  /**
   * `step` (some requests of the acquire), or the end if it comes first. A value `step` yields
   * after the end is handed to `orphan` (the caller no longer takes it).
   */
  race<T>(step: Promise<T>, orphan?: (value: T) => void): Promise<T> {
    return this.settle(step, false, orphan);
  }

  /** Waiting for `step` (room, the connection): past the deadline, the end comes at once. */
  waitFor<T>(step: Promise<T>): Promise<T> {
    return this.settle(step, true);
  }

  /**
   * Marks a wait the acquire must finish whatever its caller does (finding a create in doubt):
   * it does not reject, but the deadline may end the caller's wait meanwhile.
   */
  readonly waiting = <T>(step: Promise<T>): Promise<T> => {
    this.enterWait();
    return step.finally(() => this.waits--);
  };

  /** Until the session is usable again, or the end: SessionEnded if the session is gone. */
  async untilUsable(session: ZkSession): Promise<void> {
    if (!(await this.waitFor(session.whenUsable()))) throw new SessionEnded();
  }

  /** Stops listening (the acquire is answered): no timer or listener is left. */
  dispose(): void {
    clearTimeout(this.timer);
    this.w.signal?.removeEventListener('abort', this.onAbort);
    this.closed.removeEventListener('abort', this.onClose);
  }

  private settle<T>(step: Promise<T>, waiting: boolean, orphan?: (value: T) => void): Promise<T> {
    if (waiting) this.enterWait();
    if (this.error) {
      if (waiting) this.waits--;
      if (orphan) void step.then(orphan, () => undefined);
      return Promise.reject(this.error);
    }
    return new Promise<T>((resolve, reject) => {
      let ended = false;
      const stop = (err: Error): void => {
        ended = true;
        reject(err);
      };
      this.stops.add(stop);
      const done = (): void => {
        this.stops.delete(stop);
        if (waiting) this.waits--;
      };
      step.then(
        (value) => {
          done();
          if (ended) orphan?.(value);
          else resolve(value);
        },
        (err: unknown) => {
          done();
          reject(err);
        },
      );
    });
  }

  private enterWait(): void {
    this.waits++;
    if (this.overdue) this.end(this.timeout());
  }

  private readonly onAbort = (): void =>
    this.end(new LockAbortedError(this.w.path, this.w.signal!.reason));

  private readonly onClose = (): void => this.end(new ClientClosedError(this.w.path));

  private readonly onDeadline = (): void => {
    this.overdue = true;
    if (this.waits > 0) this.end(this.timeout());
  };

  private timeout(): Error {
    return waitTimeoutError(this.connection, this.w.path, this.w.waitTimeoutMs!, this.ahead);
  }

  private end(err: Error): void {
    if (this.error) return;
    this.error = err;
    this.dispose();
    for (const stop of this.stops) stop(err);
    this.stops.clear();
  }
}
