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

/** Lock errors logged where they happened (a loss), so not by their answer. */
const logged = new WeakSet<object>();

/**
 * @internal For who logs a lock error where it happens (the client's 'lost' event, a handler
 * answering at once that its lock was lost): its answer does not log it again.
 */
export function markLogged(error: unknown): void {
  if (typeof error === 'object' && error !== null) logged.add(error);
}

/**
 * The answer of the transport of the call `host` stands for to a lock error, the error itself
 * otherwise (a GraphQL answer also needs the call's arguments: the resolver's place in the query).
 * The client gets the short public answer; the developer's message (lock path, limit hit, what
 * to do) is logged here, once, without a stack: these are expected outcomes, not bugs. A lock
 * lost while held was logged as it was lost (markLogged); a LockLostError no loss told (a handle
 * checked after its release, a session silent past the safe window) is logged here.
 */
export function toTransportError(host: ArgumentsHost, error: unknown): unknown {
  const info = lockErrorInfo(error);
  const map = MAPPERS[host.getType<string>()];
  if (!info || !map) return error;
  const line = `${info.code} (${info.status}): ${(error as Error).message}`;
  if (info.status < 500) logger.warn(line);
  else if (!logged.has(error as object)) logger.error(line);
  return map(error, host.getArgs());
}
