// Owns the GraphQL answer to a lock error (GraphQLError with code and status).
import { lockErrorInfo } from './lock-errors.codes';

/**
 * Maps the core's errors on a GraphQL resolver to a `GraphQLError` whose extensions carry
 * `{ code, status, lock? }` (lock-errors.codes.ts), placed at the resolver's field (`path`,
 * `locations`) from its `args` (root, args, context, info) as graphql-js would. The same answer
 * in every environment: no `originalError` and no stack, which servers would show in development
 * (Apollo's `extensions.stacktrace`); the core's message goes to the log instead
 * (lock-errors.transport.ts). `graphql` is loaded only here, on a GraphQL call.
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
