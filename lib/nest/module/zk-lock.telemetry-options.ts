// Owns the check of the module option `telemetry`.
import { InvalidLockOptionsError } from '../../core/errors';
import type { LockTelemetryOptions } from '../../core/telemetry/lock-telemetry';
import { loadOpenTelemetry } from '../../core/telemetry/open-telemetry-api';
import { PathLabels } from '../../core/telemetry/lock-telemetry';

/**
 * Checks the module option `telemetry` before the client connects: a bad value fails bootstrap
 * with InvalidLockOptionsError (a broken `@opentelemetry/api` install with a ZkLockError) and
 * leaves no session open.
 */
export function checkTelemetryOption(option: unknown): void {
  if (option === false) return;
  if (option !== undefined) checkOptions(option);
  loadOpenTelemetry(); // a broken install fails here too, before anything connects
}

function checkOptions(option: unknown): void {
  if (typeof option !== 'object' || option === null) {
    throw new InvalidLockOptionsError(
      'ZkLockModule',
      `telemetry must be false or an object, got ${option === null ? 'null' : typeof option}`,
      'Leave it out to measure whenever @opentelemetry/api is installed',
    );
  }
  const {
    pathTemplates: templates,
    meterProvider,
    tracerProvider,
  } = option as LockTelemetryOptions;
  const providers: [string, unknown, string][] = [
    ['meterProvider', meterProvider, 'getMeter'],
    ['tracerProvider', tracerProvider, 'getTracer'],
  ];
  for (const [name, provider, method] of providers) {
    if (provider !== undefined && typeof (provider as any)?.[method] !== 'function') {
      throw new InvalidLockOptionsError(
        `telemetry.${name}`,
        `it has no ${method}() method`,
        `Pass an OpenTelemetry ${name[0].toUpperCase()}${name.slice(1)}, or leave it out for the global one`,
      );
    }
  }
  if (templates !== undefined && !Array.isArray(templates)) {
    throw new InvalidLockOptionsError(
      'telemetry.pathTemplates',
      `it must be an array of path templates, got ${typeof templates}`,
      "Give e.g. ['/locks/order:<id>']",
    );
  }
  new PathLabels(templates);
}
