import { HttpException, NotFoundException } from '@nestjs/common';
import {
  ClientClosedError,
  InvalidLockPathError,
  LockAccessDeniedError,
  LockLostError,
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
    expect(JSON.stringify(mapped.getResponse())).not.toMatch(/zk1|waitTimeoutMs|tryAcquire|auth/);
    expect(mapped.cause).toBe(error);
  });

  it("passes the application's own errors through unchanged", () => {
    for (const error of [new NotFoundException('nope'), new TypeError('bug'), 'text']) {
      expect(toHttpError(error)).toBe(error);
    }
  });
});
