// Owns the log lines of the client's events, through Nest's Logger.
import { Logger } from '@nestjs/common';
import { CLIENT_INTERNALS } from '../../core/client/client-internals';
import { withoutUserInfo } from '../../core/connection-string';
import { markLogged } from '../errors/lock-errors.transport';
import type { ZkLockClient } from '../../core/client/lock-client';
import type { ConnectionState, LockEvents, SessionInfo } from '../../core/types';

/** The events it logs ('waiting' and 'waited' are for metrics and traces). */
type LoggedEvent = Exclude<keyof LockEvents, 'waiting' | 'waited'>;

/** recipes/semaphore.ts takes a semaphore's inner mutex at `<semaphore>/locks`. */
const SEMAPHORE_MUTEX = '/locks';

/**
 * Logs the client's events through Nest's Logger: lock lines at verbose (an app's `logger`
 * levels without it leave them out), connection trouble at warn, a loss at error. A semaphore's
 * lines name it, not its inner mutex; with several sessions (option `sessions`), a line names
 * its session.
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
    lost: (e) => {
      if (e.error.reason === 'client-closed') {
        this.logger.warn(`Gave up "${e.path}" because the client was closed (shutdown)`);
      } else this.logger.error(e.error.message);
      markLogged(e.error); // a transport answering with it does not log it again
    },
    // Only one of these two is listened to (start()): 'state' with one session, else 'session'.
    state: (state) => this.logState(state),
    session: (session) => this.logState(session.state, session),
    skipped: (e) => this.logger.verbose(`Skipped ${e.where}: "${e.path}" is busy (onBusy: 'skip')`),
    // Another listener of the client's events threw; the client went on without it.
    error: (err) =>
      this.logger.error(
        "A listener of the lock client's events threw; no lock was affected. Fix the listener: " +
          (err instanceof Error ? err.message : String(err)),
        err instanceof Error ? err.stack : undefined,
      ),
  };
  /** The events listened to while started. */
  private logged: LoggedEvent[] = [];
  /** The sessions (by index) LOST since their last (re)connect: their next session is a new one. */
  private readonly lostSinceConnect = new Set<number>();
  /** The ZooKeeper the lines name, its credentials left out. */
  private where = '';

  constructor(private readonly client: ZkLockClient) {}

  start(): void {
    if (this.logged.length > 0) return;
    this.lostSinceConnect.clear();
    this.where = `ZooKeeper "${withoutUserInfo(this.client.connectionString)}"`;
    const sessions = this.client.sessions;
    // With several sessions, each one's states are logged instead of the client's.
    const pooled = sessions.length > 1;
    const ids = pooled
      ? `${sessions.length} sessions ${sessions.map((s) => s.id).join(', ')}`
      : `session ${this.client.sessionId}`;
    this.logger.log(`Connected to ${this.where} (${ids}${this.namespace()})`);
    const unlogged = pooled ? 'state' : 'session';
    this.logged = (Object.keys(this.listeners) as LoggedEvent[]).filter((e) => e !== unlogged);
    for (const event of this.logged) this.client.on(event, this.listeners[event]);
  }

  stop(): void {
    for (const event of this.logged) this.client.off(event, this.listeners[event]);
    this.logged = [];
  }

  /**
   * The semaphore whose inner mutex an event is about, so its lines name the semaphore a
   * developer wrote; only a path of a mutex's shape is asked about.
   */
  private semaphoreOf(path: string): string | undefined {
    if (!path.endsWith(SEMAPHORE_MUTEX)) return undefined;
    return CLIENT_INTERNALS.get(this.client)?.semaphoreOfMutex(path);
  }

  private namespace(): string {
    return this.client.namespace ? `, namespace "${this.client.namespace}"` : '';
  }

  /** `session`: the one session that changed, when the client keeps several. */
  private logState(state: ConnectionState, session?: SessionInfo): void {
    const where = this.where;
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
