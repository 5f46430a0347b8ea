/** Owns what a failed or unanswered request of a session means: the error its caller gets. */
import type { ZooKeeperAuthFailedError } from '../errors';
import { undecodableCode } from './nzc-error-codes';
import { ZkCode, ZkRequestError, codeOf, refusedAccess } from './zk-errors';

/**
 * The errors of one session's requests, and what it remembers to build them: the error codes
 * the client could not decode (see noteUndecodable).
 */
export class RequestErrors {
  /** Undecodable error codes seen in replies, with when (see noteUndecodable). */
  private readonly undecodable = new Map<number, number>();
  private refusedCode?: number;

  constructor(
    private readonly timeoutMs: number,
    /** Set once the servers refused our credentials (a request's AUTH_FAILED then says so). */
    private readonly authFailure: () => ZooKeeperAuthFailedError | undefined,
  ) {}

  /**
   * A reply the client could not decode carried an error code missing from its table (a quota
   * error, or a newer server's code). Its request will only time out, and a create would be
   * retried as "in doubt" forever: the second time the same code comes within a while, the
   * request that then times out fails with that code instead (not in doubt, so not retried).
   */
  noteUndecodable(frames: Buffer): void {
    const code = undecodableCode(frames);
    if (code === undefined) return;
    const now = Date.now();
    const seen = this.undecodable.get(code);
    const recent = seen !== undefined && now - seen < 5 * this.timeoutMs;
    this.undecodable.set(code, now);
    if (recent) this.refusedCode = code;
  }

  /** The error for a request the client answered with `err`. */
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
    return this.refusedAnswer(op, path) ?? this.timedOut(op, path);
  }

  private timedOut(op: string, path: string): ZkRequestError {
    return new ZkRequestError(
      ZkCode.REQUEST_TIMEOUT,
      op,
      path,
      `ZooKeeper ${op} "${path}" got no answer within ${this.timeoutMs} ms`,
    );
  }

  /** The error for a request that timed out after an undecodable code came twice (see above). */
  private refusedAnswer(op: string, path: string): ZkRequestError | undefined {
    const code = this.refusedCode;
    if (code === undefined) return undefined;
    this.refusedCode = undefined;
    this.undecodable.delete(code);
    return new ZkRequestError(
      code,
      op,
      path,
      `ZooKeeper answered ${op} "${path}" with error code ${code} twice, a code this client ` +
        'cannot decode (a quota, or an error of a newer server); the request is not retried',
    );
  }
}
