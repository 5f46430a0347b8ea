/** Owns a session's requests in flight: sending, deadlines, and what each reply or silence means. */
import type { ZooKeeperAuthFailedError } from '../errors';
import { corkUntilNextTick } from './nzc-patch';
import { undecodableCode } from './nzc-error-codes';
import { RequestDeadlines } from './request-deadlines';
import { ZkCode, ZkRequestError, codeOf, refusedAccess } from './zk-errors';

/** What the requests ask of the session they belong to. */
export interface RequestGate {
  /** The connection manager requests are written to (corked per tick). */
  readonly connectionManager: unknown;
  /** The error for a request the session cannot take now (lost, closed, closing), if so. */
  refuse(op: string, path: string): ZkRequestError | undefined;
  /** Set once the servers refused our credentials (a request's AUTH_FAILED then says so). */
  authFailure(): ZooKeeperAuthFailedError | undefined;
}

/** node-zookeeper-client's callback shape, with the reply gathered into one value. */
export type Send<T> = (cb: (err: any, value: T) => void) => void;

/**
 * Every request gets a deadline (node-zookeeper-client has none), one answer (a reply, an error
 * we can act on, or REQUEST_TIMEOUT), and requests issued in the same tick leave in one write.
 */
export class SessionRequests {
  private readonly deadlines: RequestDeadlines;
  /** Undecodable error codes seen in replies, with when (see noteUndecodable). */
  private readonly undecodable = new Map<number, number>();
  private refusedCode?: number;

  constructor(
    private readonly timeoutMs: number,
    private readonly gate: RequestGate,
  ) {
    this.deadlines = new RequestDeadlines(timeoutMs);
  }

  call<T>(op: string, path: string, send: Send<T>): Promise<T> {
    const refused = this.gate.refuse(op, path);
    if (refused) return Promise.reject(refused);
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const deadline = this.deadlines.add(() => {
        settled = true;
        reject(this.refusedAnswer(op, path) ?? this.timedOut(op, path));
      });
      corkUntilNextTick(this.gate.connectionManager);
      try {
        send((err, value) => {
          if (settled) return;
          settled = true;
          this.deadlines.settle(deadline);
          if (err) reject(this.failed(err, op, path));
          else resolve(value);
        });
      } catch (err) {
        // node-zookeeper-client validates paths with assertions that throw synchronously.
        settled = true;
        this.deadlines.settle(deadline);
        reject(err);
      }
    });
  }

  /** The session ended: its deadline timer stops once nothing is pending. */
  idle(): void {
    this.deadlines.idle();
  }

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

  private failed(err: any, op: string, path: string): Error {
    const code = codeOf(err);
    return (
      refusedAccess(code, op, path, this.gate.authFailure()) ??
      new ZkRequestError(
        code ?? ZkCode.CONNECTION_LOSS,
        op,
        path,
        `ZooKeeper ${op} "${path}": ${err.message ?? err}`,
      )
    );
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
