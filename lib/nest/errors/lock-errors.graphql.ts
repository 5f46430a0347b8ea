// Owns the GraphQL answer to a lock error (GraphQLError with code and status).
import { lockErrorInfo } from './lock-errors.codes';

/**
 * Maps the core's errors on a GraphQL resolver to a `GraphQLError` whose extensions carry
 * `{ code, status, lock? }` (lock-errors.codes.ts), the way GraphQL servers report error kinds.
 * `args` are the resolver's (root, args, context, info): the error is placed at the resolver's
 * field (`path`, `locations`) as graphql-js would, so it reaches the server as built here.
 *
 * The answer is the same whatever the environment: it has no `originalError` (servers show
 * its message and stack in development, e.g. graphql-yoga's masking) and no stack (Apollo adds
 * `extensions.stacktrace` from it unless NODE_ENV is 'production' or 'test'; an error without
 * one gets none). The core's message, with the servers' address, goes to the log instead
 * (lock-errors.transport.ts). `graphql` is loaded only here, on a GraphQL call (it is there
 * whenever `@nestjs/graphql` is).
 */
export function toGraphQLError(error: unknown, args: unknown[] = []): unknown {
  const info = lockErrorInfo(error);
  if (!info) return error;
  type GraphQL = typeof import('graphql');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { GraphQLError, responsePathAsArray } = require('graphql') as GraphQL;
  // The resolver's info (graphql-js gives every resolver one); absent, graphql-js places it.
  const field = args[3] as Partial<import('graphql').GraphQLResolveInfo> | undefined;
  const placed = field?.path !== undefined && Array.isArray(field.fieldNodes);
  const answer = new GraphQLError(info.message, {
    nodes: placed ? field.fieldNodes : undefined,
    path: placed ? responsePathAsArray(field.path!) : undefined,
    extensions: { code: info.code, status: info.status, lock: info.lock },
  });
  Object.defineProperty(answer, 'stack', { value: undefined, writable: true, configurable: true });
  return answer;
}
