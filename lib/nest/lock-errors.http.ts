import {
  BadRequestException,
  ConflictException,
  HttpException,
  InternalServerErrorException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { lockErrorInfo, LockErrorInfo } from './lock-errors.codes';

const EXCEPTIONS: Record<
  LockErrorInfo['status'],
  new (message: string, options: object) => HttpException
> = {
  400: BadRequestException,
  409: ConflictException,
  500: InternalServerErrorException,
  503: ServiceUnavailableException,
};

/**
 * Maps the core's errors to HTTP: a missing template value is the client's fault (400), a busy
 * lock is a conflict (409), and ZooKeeper trouble or a lost lock is ours (503); a lock node
 * whose ACL refuses this service is a misconfiguration (500). Other errors, including the
 * handler's own HttpExceptions, pass through unchanged. The classification is the one every
 * transport shares (lock-errors.codes.ts).
 */
export function toHttpError(error: unknown): unknown {
  if (error instanceof HttpException) return error;
  const info = lockErrorInfo(error);
  return info ? new EXCEPTIONS[info.status](info.message, { cause: error }) : error;
}
