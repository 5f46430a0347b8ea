// Owns a decorated handler's call around the wrapper: its request in, the transport's errors out.
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, catchError, throwError } from 'rxjs';
import { lockSpecOf } from '../decorators/distributed-lock.metadata';
import { toTransportError } from '../errors/lock-errors.transport';
import { handleWithRequest } from './distributed-lock.wrapper';

/**
 * Applied by `@DistributedLock` to every decorated method; on a handler call it does not lock
 * (the method's wrapper does, after the pipes): it hands the call's HTTP request to the wrapper
 * for the template's `<params.x>`, `<query.x>` and `<body.x>`, and maps lock errors to the
 * transport's answer (lock-errors.transport.ts). The global LockErrorsInterceptor does the same
 * mapping for every handler, but Nest applies no global enhancer to WebSocket gateways: this
 * one still does there.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    if (!lockSpecOf(handler)) return next.handle();
    const type = context.getType();
    const request = type === 'http' ? context.switchToHttp().getRequest<object>() : undefined;
    return handleWithRequest(handler, request, next).pipe(
      catchError((error: unknown) => throwError(() => toTransportError(type, error))),
    );
  }
}
