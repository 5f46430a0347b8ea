// Loading the optional `@opentelemetry/api` peer dependency, on first use only.
import type * as OpenTelemetryApi from '@opentelemetry/api';
import { ZkLockError } from '../errors';

export type OpenTelemetry = typeof OpenTelemetryApi;

const API = '@opentelemetry/api';

/**
 * `@opentelemetry/api` if the application installed it (an optional peer dependency), else
 * undefined. Loaded on first use, never when the library itself is loaded. Any other failure
 * than "not installed" (a broken install) is a ZkLockError: hiding it would hide the metrics too.
 */
export function loadOpenTelemetry(
  load: (id: string) => unknown = require,
): OpenTelemetry | undefined {
  try {
    return load(API) as OpenTelemetry;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes(API))
      return undefined;
    throw new ZkLockError(
      `${API} is installed but could not be loaded: ${String((err as Error)?.message)}. ` +
        'Reinstall it, or turn telemetry off (telemetry: false).',
      { cause: err },
    );
  }
}
