// Owns the GraphQL answer to a lock error (GraphQLError with code and status).
import { lockErrorInfo } from './lock-errors.codes';

/**
 * Maps the core's errors on a GraphQL resolver to a `GraphQLError` whose extensions carry
 * `{ code, status, lock? }` (lock-errors.codes.ts), the way GraphQL servers report error kinds. `graphql`
 * is loaded only here, on a GraphQL call (it is there whenever `@nestjs/graphql` is).
 */
export function toGraphQLError(error: unknown): unknown {
  const info = lockErrorInfo(error);
  if (!info) return error;
  type GraphQL = typeof import('graphql');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { GraphQLError } = require('graphql') as GraphQL;
  return new GraphQLError(info.message, {
    extensions: { code: info.code, status: info.status, lock: info.lock },
    originalError: error as Error,
  });
}
