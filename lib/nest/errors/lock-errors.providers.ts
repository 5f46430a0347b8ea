// Owns the global providers that map lock errors (interceptor and filter).
import type { Provider } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { LockErrorsFilter } from './lock-errors.filter';
import { LockErrorsInterceptor } from './lock-errors.interceptor';

/**
 * Lock errors answer with each transport's status and code wherever they were thrown during a
 * request: handlers, the services they call, LockService, guards (docs/reference/errors.md).
 */
export const lockErrorProviders: Provider[] = [
  { provide: APP_INTERCEPTOR, useClass: LockErrorsInterceptor },
  { provide: APP_FILTER, useClass: LockErrorsFilter },
];
