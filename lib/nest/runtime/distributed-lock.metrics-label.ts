// Owns the path template that labels the lock events of the decorated call running now.
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Set by the hold (distributed-lock.hold.ts) around each call of a method with a string
 * template, to its spec's `metricsTemplate`; read by the telemetry the module wires
 * (LockTelemetryOptions.callTemplate), so a decorated call's events carry its own template, not
 * another matching the same path.
 */
export const metricsLabels = new AsyncLocalStorage<string>();

/** The template of the decorated call running now (LockTelemetryOptions.callTemplate). */
export function currentMetricsTemplate(): string | undefined {
  return metricsLabels.getStore();
}
