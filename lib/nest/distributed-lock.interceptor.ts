import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, catchError, throwError } from 'rxjs';
import { runInCallContext } from './distributed-lock.call-context';
import { toHttpError } from './lock-errors.http';
import { toGraphQLError } from './lock-errors.graphql';
import { toRpcError } from './lock-errors.rpc';
import { toWsError } from './lock-errors.ws';
import { lockSpecOf } from './distributed-lock.metadata';

/** Each transport's convention for the core's errors (docs/nestjs/transports-and-errors.md). */
const ERROR_MAPPERS: Record<string, ((error: unknown) => unknown) | undefined> = {
  http: toHttpError,
  rpc: toRpcError,
  ws: toWsError,
  graphql: toGraphQLError,
};

/**
 * Applied by `@DistributedLock` to every decorated method; on a handler call it does not lock
 * (the method's wrapper does, after the pipes): it records the call's request for the
 * template's `<params.x>`, `<query.x>` and `<body.x>`, and maps lock errors to the transport's
 * answer (HTTP: 409 for a timeout, 503 when ZooKeeper is away; RPC and WebSocket: an RpcException
 * or WsException whose error is `{ code, status, message }`; GraphQL: a GraphQLError with
 * `extensions: { code, status }`).
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    if (!lockSpecOf(handler)) return next.handle();
    const type = context.getType();
    const request = type === 'http' ? context.switchToHttp().getRequest<object>() : undefined;
    const mapError = ERROR_MAPPERS[type];
    return new Observable<unknown>((subscriber) =>
      // handle() is called in the context too: Nest binds the handler call to it.
      runInCallContext({ handler, request }, () => {
        const result = next.handle();
        const mapped = mapError
          ? result.pipe(catchError((err: unknown) => throwError(() => mapError(err))))
          : result;
        return mapped.subscribe(subscriber);
      }),
    );
  }
}
