// Owns the choice of a transport's answer to a lock error, and its log line.
import { ArgumentsHost, Logger } from '@nestjs/common';
import { lockErrorInfo } from './lock-errors.codes';
import { toGraphQLError } from './lock-errors.graphql';
import { toHttpError } from './lock-errors.http';
import { toRpcError } from './lock-errors.rpc';
import { toWsError } from './lock-errors.ws';

/** Each transport's convention for the core's errors (docs/reference/errors.md). */
const MAPPERS: Record<string, ((error: unknown, args: unknown[]) => unknown) | undefined> = {
  http: toHttpError,
  rpc: toRpcError,
  ws: toWsError,
  graphql: toGraphQLError,
};

const logger = new Logger('ZkLock');

/**
 * The answer of the transport of the call `host` stands for to a lock error, the error itself
 * otherwise (a GraphQL answer also needs the call's arguments: the resolver's place in the query).
 * The client gets the short public answer; the developer's message (lock path, limit hit, what
 * to do) is logged here, once, without a stack: these are expected outcomes, not bugs. A lost
 * lock was logged when it was lost (ZkLockEventLogger).
 */
export function toTransportError(host: ArgumentsHost, error: unknown): unknown {
  const info = lockErrorInfo(error);
  const map = MAPPERS[host.getType<string>()];
  if (!info || !map) return error;
  const line = `${info.code} (${info.status}): ${(error as Error).message}`;
  if (info.status < 500) logger.warn(line);
  else if (info.code !== 'LOCK_LOST') logger.error(line);
  return map(error, host.getArgs());
}
