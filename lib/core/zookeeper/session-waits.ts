/** Owns waiting on a session's events: until it is usable or connected, with no listener left. */
import type { EventEmitter } from 'node:events';
import { ZkCode, ZkRequestError } from './zk-errors';

/** Resolves true at the next 'connected' or 'reconnected', false at 'lost' or 'closed'. */
export function untilUsable(session: EventEmitter): Promise<boolean> {
  return new Promise((resolve) => {
    const ok = (): void => done(true);
    const gone = (): void => done(false);
    const done = (value: boolean): void => {
      session.off('reconnected', ok).off('connected', ok).off('lost', gone).off('closed', gone);
      resolve(value);
    };
    session.on('reconnected', ok).on('connected', ok).on('lost', gone).on('closed', gone);
  });
}

/**
 * Resolves at the next 'connected' or 'reconnected'; rejects with `gone()` at 'lost', 'closed'
 * or 'refused' (every server refused the TLS handshake), and with REQUEST_TIMEOUT once
 * `timeoutMs` passed.
 */
export function untilConnected(
  session: EventEmitter,
  timeoutMs: number,
  gone: () => Error,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error): void => {
      clearTimeout(timer);
      session
        .off('connected', onOk)
        .off('reconnected', onOk)
        .off('lost', onGone)
        .off('closed', onGone)
        .off('refused', onGone);
      if (err) reject(err);
      else resolve();
    };
    const onOk = (): void => done();
    const onGone = (): void => done(gone());
    const timer = setTimeout(
      () =>
        done(
          new ZkRequestError(
            ZkCode.REQUEST_TIMEOUT,
            'connect',
            '/',
            `no session within ${timeoutMs} ms`,
          ),
        ),
      timeoutMs,
    );
    session.on('connected', onOk).on('reconnected', onOk).on('lost', onGone).on('closed', onGone);
    session.on('refused', onGone);
  });
}
