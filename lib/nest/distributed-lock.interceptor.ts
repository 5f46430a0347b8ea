import {
  CallHandler,
  ExecutionContext,
  Injectable,
  Logger,
  NestInterceptor,
  Optional,
} from '@nestjs/common';
import { Observable, Subscription, catchError, throwError } from 'rxjs';
import { LockLostError } from '../core/errors';
import type { DistributedLockSpec } from './distributed-lock.options';
import { runWithHandoff } from './handler-handoff';
import { holdUntilDone, whenResponseSent } from './lazy-result';
import { callHold, lingering, SKIPPED } from './on-busy';
import { resolveRequestPath } from './request-path';
import { toHttpError } from './lock-http-errors';
import { lockServiceFor } from './lock-service.registry';
import { LockService } from './lock.service';
import { DISTRIBUTED_LOCK_METADATA } from './zk-lock.constants';

/**
 * Applied by `@DistributedLock` to route handlers: resolves the template from the request,
 * holds the lock while the handler runs (until its Observable completes or errors) and maps
 * lock errors to HTTP. Function templates are resolved by the method wrapper from the
 * handler's arguments; non-HTTP contexts are left to the wrapper too.
 */
@Injectable()
export class DistributedLockInterceptor implements NestInterceptor {
  private readonly logger = new Logger(DistributedLockInterceptor.name);

  constructor(@Optional() private readonly locks?: LockService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spec = Reflect.getMetadata(DISTRIBUTED_LOCK_METADATA, context.getHandler()) as
      DistributedLockSpec | undefined;
    if (!spec || context.getType() !== 'http') return next.handle();
    const mapErrors = catchError((err: unknown) => throwError(() => toHttpError(err)));
    if (!spec.template) return next.handle().pipe(mapErrors);
    let path: string | string[];
    try {
      path = resolveRequestPath(spec.template, context.switchToHttp().getRequest(), spec.where);
    } catch (err) {
      return throwError(() => toHttpError(err));
    }
    const locks = this.locks ?? lockServiceFor(undefined, spec.where);
    const waitTimeoutMs = spec.options.waitTimeoutMs ?? locks.defaultWaitTimeoutMs;
    const response =
      spec.responseArg === undefined ? undefined : context.switchToHttp().getResponse<unknown>();
    return new Observable<unknown>((subscriber) => {
      let inner: Subscription | undefined;
      let finish: (() => void) | undefined;
      let answered = false;
      const pending: Promise<void>[] = [];
      const waiting = new AbortController();
      const hold = lingering(
        callHold(locks, spec, path, { waitTimeoutMs, signal: waiting.signal }),
      );
      hold(
        (lock) =>
          new Promise<void>((resolve, reject) => {
            const onLost = () => {
              const error = lock.signal.reason as unknown;
              this.logger.error(
                `${spec.where} lost lock "${[path].flat().join('", "')}" while running; answering 503: ` +
                  (error instanceof Error ? error.message : String(error)),
              );
              inner?.unsubscribe();
              reject(error instanceof LockLostError ? error : toLost(path, error));
            };
            finish = () => {
              lock.signal.removeEventListener('abort', onLost);
              resolve();
            };
            if (subscriber.closed) return finish();
            if (lock.signal.aborted) return onLost();
            lock.signal.addEventListener('abort', onLost, { once: true });
            inner = runWithHandoff(spec, () =>
              next.handle().subscribe({
                // A stream or iterable is consumed after the handler returns: hold the lock
                // until it has finished (and a response sent through @Res() too).
                next: (value) => {
                  const held = holdUntilDone(value);
                  if (held.done) pending.push(held.done);
                  subscriber.next(held.value);
                },
                error: (err: unknown) => {
                  lock.signal.removeEventListener('abort', onLost);
                  reject(err);
                },
                complete: () => {
                  answered = true;
                  subscriber.complete(); // Nest sends the answer now
                  const sent = response === undefined ? undefined : whenResponseSent(response);
                  if (sent) pending.push(sent);
                  void Promise.all(pending).then(() => finish?.());
                },
              }),
            );
          }),
      ).then(
        (outcome) => {
          if (outcome === SKIPPED) subscriber.next(undefined); // onBusy: 'skip', the lock was busy
          subscriber.complete();
        },
        (err: unknown) => subscriber.error(toHttpError(err)),
      );
      return () => {
        if (answered) return; // released once what was answered has finished
        if (!finish) waiting.abort(new Error(`${spec.where}: the request went away`));
        inner?.unsubscribe();
        finish?.();
      };
    });
  }
}

function toLost(path: string | string[], reason: unknown): LockLostError {
  return new LockLostError([path].flat().join(', '), 'connection-lost', String(reason));
}
