import { AsyncLocalStorage } from 'node:async_hooks';
import type { DistributedLockSpec } from '../decorators/distributed-lock.options';

/**
 * The path template that labels a decorated method's lock events in metrics (docs/guides/
 * observability.md): its string template; for a `@DistributedSemaphore`, its mutex's
 * (`<path>/locks`, docs/design.md "The lock family"), since leases emit no lock events. None for the
 * function form.
 */
export function metricsTemplateOf(spec: DistributedLockSpec): string | undefined {
  const source = spec.template?.source;
  if (source === undefined) return undefined;
  return spec.options.maxLeases === undefined ? source : `${source}/locks`;
}

const templates = new AsyncLocalStorage<string>();

/** Runs a decorated call with its template, which labels the events of the locks it takes. */
export function runWithMetricsTemplate<T>(template: string | undefined, fn: () => T): T {
  return template === undefined ? fn() : templates.run(template, fn);
}

/** The template of the decorated call running now (LockTelemetryOptions.callTemplate). */
export function currentMetricsTemplate(): string | undefined {
  return templates.getStore();
}
