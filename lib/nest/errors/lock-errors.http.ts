// Owns the HTTP answer to a lock error (400, 409, 429, 500 or 503 HttpException).
import {
  BadRequestException,
  ConflictException,
  HttpException,
  HttpExceptionOptions,
  HttpStatus,
  InternalServerErrorException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { lockErrorInfo, LockErrorInfo } from './lock-errors.codes';

/** 429: Nest has no exception class of its own for it. */
class TooManyRequestsException extends HttpException {
  constructor(body: object, options: HttpExceptionOptions) {
    super(body, HttpStatus.TOO_MANY_REQUESTS, options);
  }
}

const EXCEPTIONS: Record<
  LockErrorInfo['status'],
  new (body: object, options: HttpExceptionOptions) => HttpException
> = {
  400: BadRequestException,
  409: ConflictException,
  429: TooManyRequestsException,
  500: InternalServerErrorException,
  503: ServiceUnavailableException,
};

/**
 * Maps the core's errors to HTTP: a missing template value is the client's fault (400), a busy
 * lock is a conflict (409), too many callers already waiting for it too many requests (429), and
 * ZooKeeper trouble or a lost lock is ours (503); a lock node
 * whose ACL refuses this service is a misconfiguration (500). The body is for the client:
 * `{ statusCode, code, message, lock? }` (lock-errors.codes.ts); the core's error is the cause.
 * Other errors, including the handler's own HttpExceptions, pass through unchanged.
 */
export function toHttpError(error: unknown): unknown {
  if (error instanceof HttpException) return error;
  const info = lockErrorInfo(error);
  if (!info) return error;
  const { status, ...rest } = info;
  return new EXCEPTIONS[status]({ statusCode: status, ...rest }, { cause: error });
}
