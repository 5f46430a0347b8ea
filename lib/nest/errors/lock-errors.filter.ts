// Owns LockErrorsFilter: lock errors thrown before a handler's interceptors (by guards).
import { ArgumentsHost, Catch, ExceptionFilter, Optional, Type } from '@nestjs/common';
import { FILTER_CATCH_EXCEPTIONS } from '@nestjs/common/constants';
import { BaseExceptionFilter, HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { ZkLockError } from '../../core/errors';
import { toTransportError } from './lock-errors.transport';

/**
 * Global (APP_FILTER of ZkLockModule), for the lock errors thrown before a handler's
 * interceptors run, i.e. by a guard (LockErrorsInterceptor maps the rest): answers with the
 * transport's exception through Nest's own default filter of that transport. The application's
 * own filters win: Nest asks those bound with `@UseFilters()` or `app.useGlobalFilters()` first,
 * and this one hands the error to another global filter (an APP_FILTER of the application's
 * module, which Nest would otherwise ask after this one): the lock error itself to a filter that
 * names its class, else the transport's exception to a filter that catches that (as for an error
 * of a handler, which LockErrorsInterceptor maps before any filter sees it).
 */
@Catch(ZkLockError)
export class LockErrorsFilter implements ExceptionFilter {
  constructor(
    @Optional() private readonly adapterHost?: HttpAdapterHost,
    @Optional() private readonly moduleRef?: ModuleRef,
  ) {}

  catch(error: ZkLockError, host: ArgumentsHost): unknown {
    const filters = this.otherGlobalFilters();
    const naming = filters.find((filter) => catches(filter, error, false));
    if (naming) return naming.catch(error, host);
    const type = host.getType<string>();
    const mapped = toTransportError(host, error);
    const catching = mapped !== error && filters.find((filter) => catches(filter, mapped, true));
    if (catching) return catching.catch(mapped, host);
    switch (type) {
      case 'rpc': {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { BaseRpcExceptionFilter } = require('@nestjs/microservices') as Microservices;
        return new BaseRpcExceptionFilter().catch(mapped, host);
      }
      case 'ws': {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { BaseWsExceptionFilter } = require('@nestjs/websockets') as WebSockets;
        return new BaseWsExceptionFilter().catch(mapped, host);
      }
      case 'http':
        return new BaseExceptionFilter(this.adapterHost?.httpAdapter).catch(mapped, host);
      default:
        // GraphQL (and other external contexts): the returned error is what the caller gets.
        return mapped;
    }
  }

  /**
   * The other global filters, in the order Nest asks them (the last registered first). Nest
   * keeps them in its ApplicationConfig, which it does not inject: it is reached through the
   * container (not found: there is no filter to hand over to).
   */
  private otherGlobalFilters(): ExceptionFilter[] {
    const container = (this.moduleRef as unknown as { container?: NestContainerLike } | undefined)
      ?.container;
    const filters = container?.applicationConfig?.getGlobalFilters?.() ?? [];
    return [...filters].reverse().filter((filter) => !(filter instanceof LockErrorsFilter));
  }
}

interface NestContainerLike {
  applicationConfig?: { getGlobalFilters?(): ExceptionFilter[] };
}

/** Whether a filter's `@Catch()` covers the error; `@Catch()` without types only if `all`. */
function catches(filter: ExceptionFilter, error: unknown, all: boolean): boolean {
  const types: Type<unknown>[] =
    Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, filter.constructor) ?? [];
  return types.length === 0 ? all : types.some((type) => error instanceof type);
}

type Microservices = typeof import('@nestjs/microservices');
type WebSockets = typeof import('@nestjs/websockets');
