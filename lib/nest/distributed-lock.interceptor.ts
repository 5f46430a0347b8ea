import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, catchError, throwError } from 'rxjs';
import { runInCallContext } from './call-context';
import { toHttpError } from './lock-http-errors';
import { DISTRIBUTED_LOCK_METADATA } from './zk-lock.constants';

/**
 * Applied by `@DistributedLock` to every decorated method; on a handler call it does not lock
 * (the method's wrapper does, after the pipes): it records the call's request for the
 * template's `<params.x>`, `<query.x>` and `<body.x>`, and maps lock errors to the transport's
 * answer (HTTP: 409 for a timeout, 503 when ZooKeeper is away; README "Errors on HTTP").
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const handler = context.getHandler();
    if (!Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, handler)) return next.handle();
    const http = context.getType() === 'http';
    const request = http ? context.switchToHttp().getRequest<object>() : undefined;
    return new Observable<unknown>((subscriber) =>
      // handle() is called in the context too: Nest binds the handler call to it.
      runInCallContext({ handler, request }, () => {
        const result = next.handle();
        return (
          http
            ? result.pipe(catchError((err: unknown) => throwError(() => toHttpError(err))))
            : result
        ).subscribe(subscriber);
      }),
    );
  }
}
