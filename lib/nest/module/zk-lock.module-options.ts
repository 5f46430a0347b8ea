// Owns the check of the module's options at bootstrap, before the client connects.
import { MAX_WAIT_MS } from '../../core/client/acquire-options';
import { checkClientOptions, show } from '../../core/client/client-options';
import { InvalidLockOptionsError } from '../../core/errors';
import type { ZkLockClientOptions } from '../../core/types';
import type { ZkLockModuleOptions } from './zk-lock-module-options.interface';
import { checkTelemetryOption } from './zk-lock.telemetry-options';

/**
 * Checks every option of the module at bootstrap, before the client connects, naming the option
 * (`subject`: `ZkLockModule.forRoot()`), and returns the client's own options.
 */
export function checkModuleOptions(
  options: ZkLockModuleOptions,
  subject: string,
): ZkLockClientOptions {
  const { waitTimeoutMs, telemetry, participantId, ...clientOptions } =
    options ?? ({} as ZkLockModuleOptions);
  if (participantId !== undefined && typeof participantId !== 'string') {
    throw new InvalidLockOptionsError(
      subject,
      `participantId must be a string, got ${show(participantId)}`,
      'Give a short name of this instance, or leave it out for <hostname>:<pid>',
    );
  }
  const ms: unknown = waitTimeoutMs;
  if (ms !== undefined && !(typeof ms === 'number' && ms >= 0 && ms <= MAX_WAIT_MS)) {
    throw new InvalidLockOptionsError(
      subject,
      `waitTimeoutMs must be a number of milliseconds from 0 to ${MAX_WAIT_MS}, got ${show(ms)}`,
      'Give the longest a call may wait for a busy lock, e.g. waitTimeoutMs: 5_000, or leave it out to wait until the lock is free',
    );
  }
  checkClientOptions(clientOptions, subject);
  checkTelemetryOption(telemetry);
  return clientOptions;
}
