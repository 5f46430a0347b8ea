// Owns the log lines of the client's events, through Nest's Logger.
import { Logger } from '@nestjs/common';
import { CLIENT_INTERNALS } from '../../core/client/client-internals';
import { withoutUserInfo } from '../../core/connection-string';
import type { ZkLockClient } from '../../core/client/lock-client';
import type { ConnectionState, LockEvents, SessionInfo } from '../../core/types';

/** The events it logs ('waiting' and 'waited' are for metrics and traces). */
type LoggedEvent = Exclude<keyof LockEvents, 'waiting' | 'waited'>;

/**
 * Logs the client's events through Nest's Logger: each lock's lines (acquired, released, busy,
 * skipped, a wait given up) at verbose, which Nest does not print by default; connection trouble
 * at warn, a loss at error. A timeout's full message, with its advice, is logged where it is
 * answered (lock-errors.transport.ts) or reaches the caller. A semaphore's lines name it, not
 * its inner mutex `<path>/locks`. With several sessions (option
 * `sessions`), each session's changes are logged, naming it: a lost session loses only its locks.
 */
export class ZkLockEventLogger {
  private readonly logger = new Logger('ZkLock');
  private readonly listeners: { [E in LoggedEvent]: (payload: LockEvents[E]) => void } = {
    acquired: (e) => {
      const semaphore = this.semaphoreOf(e.path);
      this.logger.verbose(
        semaphore
          ? `Semaphore "${semaphore}": its mutex taken after ${e.waitMs} ms, to take a lease`
          : `Acquired "${e.path}" after ${e.waitMs} ms (fencing token ${e.fencingToken}` +
              `${e.reentrant ? ', re-entered' : ''})`,
      );
    },
    released: (e) => {
      const semaphore = this.semaphoreOf(e.path);
      this.logger.verbose(
        semaphore
          ? `Semaphore "${semaphore}": its mutex released after ${e.holdMs} ms`
          : `Released "${e.path}" after holding it ${e.holdMs} ms`,
      );
    },
    // waitTimeoutMs 0 is a try that found the lock busy (onBusy: 'skip'): no trouble.
    timeout: (e) => {
      const semaphore = this.semaphoreOf(e.path);
      const what = semaphore ? `semaphore "${semaphore}"` : `"${e.path}"`;
      this.logger.verbose(
        e.waitTimeoutMs === 0
          ? `Tried ${what} once: busy`
          : `Gave up waiting for ${what} after ${e.waitTimeoutMs} ms (busy)`,
      );
    },
    lost: (e) =>
      e.error.reason === 'client-closed'
        ? this.logger.warn(`Gave up "${e.path}" because the client was closed (shutdown)`)
        : this.logger.error(e.error.message),
    state: (state) => {
      if (!this.pooled) this.logState(state);
    },
    session: (session) => {
      if (this.pooled) this.logState(session.state, session);
    },
    skipped: (e) => this.logger.verbose(`Skipped ${e.where}: "${e.path}" is busy (onBusy: 'skip')`),
  };
  private started = false;
  /** The sessions (by index) LOST since their last (re)connect: their next session is a new one. */
  private readonly lostSinceConnect = new Set<number>();
  /** The client keeps several sessions: each one's states are logged instead of the client's. */
  private pooled = false;

  constructor(private readonly client: ZkLockClient) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.lostSinceConnect.clear();
    const sessions = this.client.sessions;
    this.pooled = sessions.length > 1;
    const ids = this.pooled
      ? `${sessions.length} sessions ${sessions.map((s) => s.id).join(', ')}`
      : `session ${this.client.sessionId}`;
    this.logger.log(
      `Connected to ZooKeeper "${withoutUserInfo(this.client.connectionString)}" ` +
        `(${ids}${this.namespace()})`,
    );
    for (const [event, listener] of Object.entries(this.listeners)) {
      this.client.on(event, listener);
    }
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    for (const [event, listener] of Object.entries(this.listeners)) {
      this.client.off(event, listener);
    }
  }

  /**
   * The semaphore whose inner mutex (`<path>/locks`) an event is about: its lines name the
   * semaphore a developer wrote, not the mutex that serialises its acquirers.
   */
  private semaphoreOf(path: string): string | undefined {
    return CLIENT_INTERNALS.get(this.client)?.semaphoreOfMutex(path);
  }

  private namespace(): string {
    return this.client.namespace ? `, namespace "${this.client.namespace}"` : '';
  }

  /** `session`: the one session that changed, when the client keeps several. */
  private logState(state: ConnectionState, session?: SessionInfo): void {
    const where = `ZooKeeper "${withoutUserInfo(this.client.connectionString)}"`;
    const index = session?.index ?? 0;
    // With several sessions, a line names its session, and only that session's locks are concerned.
    const say = (one: string, several: string): string =>
      session ? `Session ${index} (${session.id}) ${several}` : one;
    switch (state) {
      case 'SUSPENDED':
        this.logger.warn(
          say(
            `Disconnected from ${where}: held locks are uncertain until it answers`,
            `disconnected from ${where}: its held locks are uncertain until it answers`,
          ),
        );
        break;
      case 'CONNECTED':
      case 'RECONNECTED':
        if (this.lostSinceConnect.delete(index)) {
          this.logger.warn(
            say(
              `Connected to ${where} with a new session: locks held before were lost, waiters queue again`,
              `connected to ${where} as a new session: its locks held before were lost, its waiters queue again`,
            ),
          );
        } else if (state === 'RECONNECTED') {
          this.logger.warn(
            say(
              `Reconnected to ${where} with the same session: held locks are kept`,
              `reconnected to ${where}: its held locks are kept`,
            ),
          );
        } else {
          this.logger.debug(say(`Connection to ${where}: ${state}`, `to ${where}: ${state}`));
        }
        break;
      case 'LOST': {
        this.lostSinceConnect.add(index);
        // The servers refused our credentials: say so (the client does not reconnect).
        const refused = CLIENT_INTERNALS.get(this.client)?.connectionFailure;
        this.logger.error(
          refused
            ? `${refused.message} Every held lock is lost.`
            : say(
                `Session with ${where} expired: every held lock is lost`,
                `with ${where} expired: its held locks are lost (the other sessions' are kept)`,
              ),
        );
        break;
      }
      default:
        this.logger.debug(say(`Connection to ${where}: ${state}`, `to ${where}: ${state}`));
    }
  }
}
