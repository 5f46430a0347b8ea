// Owns the check of the module's options at bootstrap, before the client connects.
import { MAX_WAIT_MS, checkClientOptions, show } from '../../core/client/client-options';
import { InvalidLockOptionsError } from '../../core/errors';
import { checkParticipantId } from '../../core/recipes/leader-latch';
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
  const { waitTimeoutMs, handlerWaitTimeoutMs, telemetry, participantId, ...clientOptions } =
    options ?? ({} as ZkLockModuleOptions);
  // Before connecting: the first election checks it too, but once connected, and its failure
  // would leave app.init() with a session open.
  if (participantId !== undefined) checkParticipantId(subject, participantId);
  checkWait(
    subject,
    'waitTimeoutMs',
    waitTimeoutMs,
    'Give the longest a call may wait for a busy lock, e.g. waitTimeoutMs: 5_000, or leave it out to wait until the lock is free',
  );
  checkWait(
    subject,
    'handlerWaitTimeoutMs',
    handlerWaitTimeoutMs,
    'Give the longest a handler call may wait for a busy lock, e.g. handlerWaitTimeoutMs: 5_000, or leave it out for 30 s',
  );
  checkClientOptions(clientOptions, subject);
  checkTelemetryOption(telemetry);
  return clientOptions;
}

/** A wait option: undefined, or a number of milliseconds from 0 (try once) to MAX_WAIT_MS. */
function checkWait(subject: string, option: string, ms: unknown, advice: string): void {
  if (ms === undefined || (typeof ms === 'number' && ms >= 0 && ms <= MAX_WAIT_MS)) return;
  throw new InvalidLockOptionsError(
    subject,
    `${option} must be a number of milliseconds from 0 to ${MAX_WAIT_MS}, got ${show(ms)}`,
    advice,
  );
}
