// Owns LockErrorsInterceptor: lock errors leaving any handler become the transport's answer.
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, catchError, throwError } from 'rxjs';
import { toTransportError } from './lock-errors.transport';

/**
 * Global (APP_INTERCEPTOR of ZkLockModule): a lock error that leaves any handler, whether the
 * handler, a service it called, a pipe or an interceptor threw it, becomes the transport's
 * exception (HTTP: a 409/503/400 HttpException; RPC: RpcException; WS: WsException; GraphQL:
 * GraphQLError), which the application's own exception filters then see like any other.
 * Nest applies no global enhancer to WebSocket gateways: bind it there with
 * `@UseInterceptors(LockErrorsInterceptor)` on a gateway whose handlers call locked services.
 */
@Injectable()
export class LockErrorsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next
      .handle()
      .pipe(catchError((error: unknown) => throwError(() => toTransportError(context, error))));
  }
}
