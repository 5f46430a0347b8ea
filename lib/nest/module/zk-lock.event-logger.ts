// Owns the log lines of the client's events, through Nest's Logger.
import { Logger } from '@nestjs/common';
import type { ZkLockClient } from '../../core/client/lock-client';
import type { ConnectionState, LockEvents } from '../../core/types';

/** The events it logs ('waiting' and 'waited' are for metrics and traces). */
type LoggedEvent = Exclude<keyof LockEvents, 'waiting' | 'waited'>;

/**
 * Logs the client's events through Nest's Logger: each lock's lines (acquired, released, busy,
 * skipped, a wait given up) at verbose, which Nest does not print by default; connection trouble
 * at warn, a loss at error. A timeout's full message, with its advice, is logged where it is
 * answered (lock-errors.transport.ts) or reaches the caller.
 */
export class ZkLockEventLogger {
  private readonly logger = new Logger('ZkLock');
  private readonly listeners: { [E in LoggedEvent]: (payload: LockEvents[E]) => void } = {
    acquired: (e) =>
      this.logger.verbose(
        `Acquired "${e.path}" after ${e.waitMs} ms (fencing token ${e.fencingToken}` +
          `${e.reentrant ? ', re-entered' : ''})`,
      ),
    released: (e) => this.logger.verbose(`Released "${e.path}" after holding it ${e.holdMs} ms`),
    // waitTimeoutMs 0 is a try that found the lock busy (onBusy: 'skip'): no trouble.
    timeout: (e) =>
      this.logger.verbose(
        e.waitTimeoutMs === 0
          ? `Tried "${e.path}" once: busy`
          : `Gave up waiting for "${e.path}" after ${e.waitTimeoutMs} ms (busy)`,
      ),
    lost: (e) =>
      e.error.reason === 'client-closed'
        ? this.logger.warn(`Gave up "${e.path}" because the client was closed (shutdown)`)
        : this.logger.error(e.error.message),
    state: (state) => this.logState(state),
    skipped: (e) => this.logger.verbose(`Skipped ${e.where}: "${e.path}" is busy (onBusy: 'skip')`),
  };
  private started = false;
  /** A LOST since the last (re)connect: the next session is a new one. */
  private lostSinceConnect = false;

  constructor(private readonly client: ZkLockClient) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.lostSinceConnect = false;
    this.logger.log(
      `Connected to ZooKeeper "${withoutUserInfo(this.client.connectionString)}" ` +
        `(session ${this.client.sessionId}${this.namespace()})`,
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

  private namespace(): string {
    return this.client.namespace ? `, namespace "${this.client.namespace}"` : '';
  }

  private logState(state: ConnectionState): void {
    const where = `ZooKeeper "${this.client.connectionString}"`;
    switch (state) {
      case 'SUSPENDED':
        this.logger.warn(`Disconnected from ${where}: held locks are uncertain until it answers`);
        break;
      case 'CONNECTED':
      case 'RECONNECTED':
        if (this.lostSinceConnect) {
          this.lostSinceConnect = false;
          this.logger.warn(
            `Connected to ${where} with a new session: locks held before were lost, waiters queue again`,
          );
        } else if (state === 'RECONNECTED') {
          this.logger.warn(`Reconnected to ${where} with the same session: held locks are kept`);
        } else {
          this.logger.debug(`Connection to ${where}: ${state}`);
        }
        break;
      case 'LOST': {
        this.lostSinceConnect = true;
        // The servers refused our credentials: say so (the client does not reconnect).
        const refused = this.client.connectionFailure;
        this.logger.error(
          refused
            ? `${refused.message} Every held lock is lost.`
            : `Session with ${where} expired: every held lock is lost`,
        );
        break;
      }
      default:
        this.logger.debug(`Connection to ${where}: ${state}`);
    }
  }
}

/** A connection string as logs show it: any `user:password@` a host was given is cut. */
function withoutUserInfo(connectionString: string): string {
  return connectionString.replace(/[^,@/]*@/g, '');
}
