/** Owns what a failed or unanswered request of a session means: the error its caller gets. */
import type { ZooKeeperAuthFailedError } from '../errors';
import { ZkCode, ZkRequestError, codeOf, refusedAccess } from './zk-errors';

/** The errors of one session's requests. */
export class RequestErrors {
  constructor(
    private readonly timeoutMs: number,
    /** Set once the servers refused our credentials (a request's AUTH_FAILED then says so). */
    private readonly authFailure: () => ZooKeeperAuthFailedError | undefined,
  ) {}

  /**
   * The error for a request answered with `err`: every code decodes (ZkServerError), so a code
   * the engine does not act on (a quota, an error of a newer server) fails its request with that
   * code at once, not in doubt and not retried.
   */
  failed(err: any, op: string, path: string): Error {
    const code = codeOf(err);
    return (
      refusedAccess(code, op, path, this.authFailure()) ??
      new ZkRequestError(
        code ?? ZkCode.CONNECTION_LOSS,
        op,
        path,
        `ZooKeeper ${op} "${path}": ${err.message ?? err}`,
      )
    );
  }

  /** The error for a request that got no answer within the timeout. */
  unanswered(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.REQUEST_TIMEOUT,
      op,
      path,
      `ZooKeeper ${op} "${path}" got no answer within ${this.timeoutMs} ms`,
    );
  }
}
