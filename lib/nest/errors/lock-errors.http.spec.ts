import { HttpException, NotFoundException } from '@nestjs/common';
import {
  ClientClosedError,
  InvalidLockPathError,
  LockAccessDeniedError,
  LockLostError,
  LockQueueFullError,
  LockTimeoutError,
  ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
} from '../../core/errors';
import { toHttpError } from './lock-errors.http';

describe('toHttpError', () => {
  it.each([
    [
      new InvalidLockPathError('/locks/<id>', 'the value of <id> is missing'),
      400,
      'INVALID_LOCK_PATH',
      '/locks/<id>',
    ],
    [new LockTimeoutError('/locks/a', 2000, 1), 409, 'LOCK_TIMEOUT', '/locks/a'],
    [
      new LockQueueFullError('/locks/a', 'maxWaitersPerPath', 1000),
      429,
      'LOCK_QUEUE_FULL',
      '/locks/a',
    ],
    [new LockQueueFullError('/locks/b', 'maxWaiters', 10_000), 429, 'LOCK_QUEUE_FULL', '/locks/b'],
    [
      new ZooKeeperUnavailableError('zk1:2181', 5000, 'a wait'),
      503,
      'ZOOKEEPER_UNAVAILABLE',
      undefined,
    ],
    [
      new LockLostError('/locks/a', 'session-expired', 'the session expired'),
      503,
      'LOCK_LOST',
      '/locks/a',
    ],
    [new ClientClosedError('/locks/a'), 503, 'ZOOKEEPER_UNAVAILABLE', undefined],
    [new ZooKeeperAuthFailedError('zk1:2181', 'digest'), 503, 'ZOOKEEPER_UNAVAILABLE', undefined],
    [
      new LockAccessDeniedError('/locks/a', 'create a node under'),
      500,
      'LOCK_ACCESS_DENIED',
      undefined,
    ],
  ])('maps %s to %i with a client body and the cause', (error, status, code, lock) => {
    const mapped = toHttpError(error) as HttpException;
    expect(mapped).toBeInstanceOf(HttpException);
    expect(mapped.getStatus()).toBe(status);
    expect(mapped.getResponse()).toEqual({
      statusCode: status,
      code,
      message: expect.any(String),
      ...(lock === undefined ? {} : { lock }),
    });
    // The developer's message (address, advice) stays on the cause, out of the body.
    expect(JSON.stringify(mapped.getResponse())).not.toMatch(
      /zk1|waitTimeoutMs|tryAcquire|auth|maxWaiters/,
    );
    expect(mapped.cause).toBe(error);
  });

  it('shows at most the first 100 characters of a long lock path, and its length', () => {
    const path = `/locks/${'x'.repeat(60_000)}`;
    for (const error of [
      new InvalidLockPathError(path, 'it is longer than 4096 bytes'),
      new LockTimeoutError(path, 2000, 1),
      new LockQueueFullError(path, 'maxWaitersPerPath', 1000),
    ]) {
      const body = (toHttpError(error) as HttpException).getResponse() as { lock: string };
      expect(body.lock).toBe(`${path.slice(0, 100)}...(${path.length} characters)`);
      expect(JSON.stringify(body).length).toBeLessThan(400);
    }
    expect(
      (toHttpError(new LockTimeoutError('/a'.repeat(60), 1, 1)) as HttpException).getResponse(),
    ).toMatchObject({ lock: '/a'.repeat(60) });
  });

  it("passes the application's own errors through unchanged", () => {
    for (const error of [new NotFoundException('nope'), new TypeError('bug'), 'text']) {
      expect(toHttpError(error)).toBe(error);
    }
  });
});
