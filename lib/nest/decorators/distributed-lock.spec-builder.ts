// Owns the spec of one @DistributedLock method: every option checked, everything resolved, frozen.
import { RESPONSE_PASSTHROUGH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { Observable } from 'rxjs';
import { MAX_WAIT_MS } from '../../core/client/client-options';
import { InvalidLockPathError, ZkLockError } from '../../core/errors';
import { parseKeyTemplate } from './key-template';
import { parameterNames } from './key-template.parameter-names';
import { templateSources } from './key-template.sources';
import type { DistributedLockOptions, DistributedLockSpec } from './distributed-lock.options';
import { lockSpecOf } from './distributed-lock.metadata';

type AnyMethod = (...args: any[]) => unknown;

/**
 * Builds the spec of `target[key]` when the decorator is applied: checks the template and every
 * option (a mistake fails when the class is defined, naming `Class.method`), fixes where each
 * `<name>` comes from, and freezes the result. `method` may be another `@DistributedLock`'s
 * wrapper: names are read from the user's method underneath.
 */
export function buildLockSpec(
  template: unknown,
  options: DistributedLockOptions,
  target: object,
  key: string | symbol,
  method: unknown,
): DistributedLockSpec {
  const owner = typeof target === 'function' ? target : target.constructor;
  const where = `${owner.name}.${String(key)}`;
  if (typeof method !== 'function') {
    throw new ZkLockError(`@DistributedLock decorates methods only; ${where} is not a method.`);
  }
  checkWait(options, where);
  checkKind(options, where);
  checkOnBusy(options, where);
  const responseArg = responseArgument(owner, key);
  const names = lockSpecOf(method)?.parameterNames ?? parameterNames(method as AnyMethod);
  const common = {
    where,
    owner: owner.name,
    options: Object.freeze({ ...options }),
    parameterNames: Object.freeze(names),
    responseArg,
    returnsObservable: Reflect.getMetadata('design:returntype', target, key) === Observable,
  };
  if (typeof template === 'function') {
    return Object.freeze({ ...common, pathFn: template as (...args: any[]) => string });
  }
  if (typeof template !== 'string') {
    throw new InvalidLockPathError(
      String(template),
      `@DistributedLock on ${where} needs a path template string or a function`,
    );
  }
  const parsed = parseKeyTemplate(template, where);
  if (parsed.expanding && (options.mode || options.maxLeases !== undefined)) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: "<${parsed.expanding.raw}>" locks several paths at once ` +
        '(the multi-path lock), which has no read/write mode or semaphore; remove the "*" or the option.',
    );
  }
  return Object.freeze({
    ...common,
    template: parsed,
    sources: Object.freeze(templateSources(parsed, owner, key, names, where)),
    metricsTemplate: template,
  });
}

/** A `waitTimeoutMs` every call would be refused with (the core's limit) fails now instead. */
function checkWait({ waitTimeoutMs: wait }: DistributedLockOptions, where: string): void {
  if (wait !== undefined && !(Number.isFinite(wait) && wait >= 0 && wait <= MAX_WAIT_MS)) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: waitTimeoutMs must be a number from 0 to ${MAX_WAIT_MS} ` +
        `(got ${String(wait)}); leave it out to wait until the lock is free.`,
    );
  }
}

/** `mode`, `maxLeases` and `leases` that cannot work fail when the class is defined. */
function checkKind(options: DistributedLockOptions, where: string): void {
  const { mode, maxLeases, leases } = options;
  if (mode !== undefined && mode !== 'read' && mode !== 'write') {
    throw new ZkLockError(
      `@DistributedLock on ${where}: mode must be 'read' or 'write' (got ${JSON.stringify(mode)}); ` +
        'leave it out for the mutex.',
    );
  }
  if (maxLeases === undefined) return;
  if (mode !== undefined) {
    throw new ZkLockError(`@DistributedSemaphore on ${where}: a semaphore has no read/write mode.`);
  }
  if (!Number.isInteger(maxLeases) || maxLeases < 1) {
    throw new ZkLockError(
      `@DistributedSemaphore on ${where}: maxLeases must be an integer >= 1 (got ${String(maxLeases)}).`,
    );
  }
  const n = leases ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > maxLeases) {
    throw new ZkLockError(
      `@DistributedSemaphore on ${where}: leases must be an integer from 1 to maxLeases (${maxLeases}), got ${String(leases)}.`,
    );
  }
}

/**
 * `onBusy` and `minHoldMs` that cannot work (docs/design.md "Busy locks in decorators (`onBusy`)
 * and run-once jobs (`minHoldMs`)") fail naming `Class.method`, the allowed values and what to do.
 */
function checkOnBusy(options: DistributedLockOptions, where: string): void {
  const { onBusy, minHoldMs } = options;
  if (onBusy !== undefined && onBusy !== 'wait' && onBusy !== 'skip') {
    throw new ZkLockError(
      `@DistributedLock on ${where}: onBusy must be 'wait' or 'skip' (got ${JSON.stringify(onBusy)}); ` +
        "'skip' returns undefined when the lock is busy, leave it out to wait.",
    );
  }
  if (onBusy === 'skip' && options.waitTimeoutMs !== undefined) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: waitTimeoutMs (${String(options.waitTimeoutMs)}) has no ` +
        "effect with onBusy: 'skip', which tries once; remove one of them.",
    );
  }
  if (
    minHoldMs !== undefined &&
    !(Number.isFinite(minHoldMs) && minHoldMs >= 0 && minHoldMs <= MAX_WAIT_MS)
  ) {
    throw new ZkLockError(
      `@DistributedLock on ${where}: minHoldMs must be a number from 0 to ${MAX_WAIT_MS} ` +
        `(got ${String(minHoldMs)}); set it above the clock skew between instances and below ` +
        "the job's period, or leave it out.",
    );
  }
}

/** The index of a `@Res()` argument the handler answers through itself (no passthrough). */
function responseArgument(owner: object, key: string | symbol): number | undefined {
  const args: Record<string, { index: number }> =
    Reflect.getMetadata(ROUTE_ARGS_METADATA, owner, key) ?? {};
  if (Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, owner, key)) return undefined;
  const entry = Object.entries(args).find(
    ([k]) => k.split(':')[0] === `${RouteParamtypes.RESPONSE}`,
  );
  return entry?.[1].index;
}
