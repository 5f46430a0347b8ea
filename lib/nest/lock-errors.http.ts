import {
  BadRequestException,
  ConflictException,
  HttpException,
  InternalServerErrorException,
  ServiceUnavailableException,
} from '@nestjs/common';
import {
  ClientClosedError,
  InvalidLockPathError,
  LockAccessDeniedError,
  LockLostError,
  LockTimeoutError,
  ZooKeeperAuthFailedError,
  ZooKeeperUnavailableError,
} from '../core/errors';

/**
 * Maps the core's errors to HTTP: a missing template value is the client's fault (400), a busy
 * lock is a conflict (409), and ZooKeeper trouble or a lost lock is ours (503); a lock node
 * whose ACL refuses this service is a misconfiguration (500). Other errors, including the
 * handler's own HttpExceptions, pass through unchanged.
 */
export function toHttpError(error: unknown): unknown {
  if (error instanceof HttpException) return error;
  const options = { cause: error };
  if (error instanceof InvalidLockPathError) return new BadRequestException(error.message, options);
  if (error instanceof LockTimeoutError) return new ConflictException(error.message, options);
  if (
    error instanceof ZooKeeperUnavailableError ||
    error instanceof ZooKeeperAuthFailedError ||
    error instanceof LockLostError ||
    error instanceof ClientClosedError
  ) {
    return new ServiceUnavailableException(error.message, options);
  }
  if (error instanceof LockAccessDeniedError) {
    return new InternalServerErrorException(error.message, options);
  }
  return error;
}
