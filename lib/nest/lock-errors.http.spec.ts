import { HttpException, NotFoundException } from '@nestjs/common';
import {
  ClientClosedError,
  InvalidLockPathError,
  LockAccessDeniedError,
  LockLostError,
  LockTimeoutError,
  ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
} from '../core/errors';
import { toHttpError } from './lock-errors.http';

describe('toHttpError', () => {
  it.each([
    [new InvalidLockPathError('/locks/<id>', 'the value of <id> is missing'), 400],
    [new LockTimeoutError('/locks/a', 2000, 1), 409],
    [new ZooKeeperUnavailableError('zk1:2181', 5000, 'a wait'), 503],
    [new LockLostError('/locks/a', 'session-expired', 'the session expired'), 503],
    [new ClientClosedError('/locks/a'), 503],
    [new ZooKeeperAuthFailedError('zk1:2181', 'digest'), 503],
    [new LockAccessDeniedError('/locks/a', 'create a node under'), 500],
  ])('maps %s to %i with its message and the cause', (error, status) => {
    const mapped = toHttpError(error) as HttpException;
    expect(mapped).toBeInstanceOf(HttpException);
    expect(mapped.getStatus()).toBe(status);
    expect(mapped.message).toBe(error.message);
    expect(mapped.cause).toBe(error);
  });

  it("passes the application's own errors through unchanged", () => {
    for (const error of [new NotFoundException('nope'), new TypeError('bug'), 'text']) {
      expect(toHttpError(error)).toBe(error);
    }
  });
});
