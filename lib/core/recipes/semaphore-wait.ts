// When a semaphore acquire's caller stops waiting: its abort, close(), or its deadline.
import { ClientClosedError, LockAbortedError } from '../errors';
import { noSessionForTry, waitTimeoutError } from '../engine/waiter-queue';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { SessionEnded } from './semaphore-watch';

/**
 * @internal
 * The end of one semaphore acquire's wait, whichever comes first: its signal aborts
 * (LockAbortedError), the client closes (ClientClosedError), or its deadline passes while it
 * waits (LockTimeoutError; ZooKeeperUnavailableError without a connected session). As in
 * Curator, the deadline bounds waiting (for room, for the connection), not the requests of an
 * acquire that finds room; one that passed during them ends the next wait as it starts. `error`
 * is set synchronously, so a grant checked after it takes no lease. The caller is answered even
 * while the acquire's requests are stuck in an outage; the acquire finishes in the background
 * and deletes what it created (docs/design.md "The lock family").
 */
export class WaitEnd {
  /** Why the caller stopped waiting; undefined while it waits. */
  error?: Error;
  private readonly stops = new Set<(err: Error) => void>();
  private timer?: NodeJS.Timeout;
  private overdue = false;
  /** Waits under way: the deadline ends the caller's wait only during one. */
  private waits = 0;
  /** How many are ahead by the last listing: for the timeout's message. */
  private ahead?: number;

  constructor(
    private readonly w: {
      path: string;
      deadline?: number;
      waitTimeoutMs?: number;
      signal?: AbortSignal;
      /** tryAcquire: it waits for nothing, a wait for the connection ends at once (as a lock's try). */
      tryOnly?: boolean;
    },
    /** The connection of the semaphore's session: tells a busy semaphore from an outage. */
    private readonly connection: ZkConnection,
  ) {
    // Not aborted yet: take() checked the signal just before.
    w.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (w.tryOnly) this.overdue = true;
    else if (w.deadline !== undefined) {
      this.timer = setTimeout(this.onDeadline, Math.max(0, w.deadline - Date.now()));
    }
  }

  /** The client is closing (its close()): ClientClosedError. */
  clientClosed(): void {
    this.end(new ClientClosedError(this.w.path));
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

  /** Until the leases change (`changed`) with `ahead` more than the limit, or the end. */
  waitForRoom(changed: Promise<void>, ahead: number): Promise<void> {
    this.ahead = ahead;
    return this.settle(changed, true);
  }

  /** The semaphore's session, once connected (a wait), or the end. */
  session(): Promise<ZkSession> {
    const ready = this.connection.ready();
    return this.connection.current.state === 'connected' ? ready : this.settle(ready, true);
  }

  /** Until the session is usable again (a wait), or the end: SessionEnded if it is gone. */
  async untilUsable(session: ZkSession): Promise<void> {
    if (session.state === 'connected') return;
    if (!(await this.settle(session.whenUsable(), true))) throw new SessionEnded();
  }

  /**
   * Recovery of a create in doubt: it must find its node whatever the caller does, so its wait
   * for the connection does not end with the caller's; but the deadline may end the caller's
   * wait meanwhile (ProtectedNode.recover).
   */
  readonly usable = (session: ZkSession): Promise<boolean> => {
    if (session.state === 'connected') return Promise.resolve(true);
    this.enterWait();
    return session.whenUsable().finally(() => this.waits--);
  };

  /** Stops listening (the acquire is answered): no timer or listener is left. */
  dispose(): void {
    clearTimeout(this.timer);
    this.w.signal?.removeEventListener('abort', this.onAbort);
  }

  /** `step`, or the end first; `isWait`: the deadline may end it (waits for room, a session). */
  private settle<T>(step: Promise<T>, isWait: boolean, orphan?: (value: T) => void): Promise<T> {
    if (isWait) this.enterWait();
    if (this.error) {
      if (isWait) this.waits--;
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
        if (isWait) this.waits--;
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

  private readonly onDeadline = (): void => {
    this.overdue = true;
    if (this.waits > 0) this.end(this.timeout());
  };

  private timeout(): Error {
    if (this.w.tryOnly) return noSessionForTry(this.connection, this.w.path);
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
