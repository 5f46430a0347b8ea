// Owns the options of @DistributedLock and the frozen spec the decorator builds from them.
import type { KeyTemplate } from './key-template';
import type { TemplateSources } from './key-template.sources';

/** Options of `@DistributedLock`. */
export interface DistributedLockOptions {
  /** Give up after this long: 409 on HTTP, LockTimeoutError elsewhere. Default: module option. */
  waitTimeoutMs?: number;
  /** One side of the path's read/write lock instead of the mutex (readers share). */
  mode?: 'read' | 'write';
  /** Set by `@DistributedSemaphore`: a lease of a semaphore with this many, not a lock. */
  maxLeases?: number;
  /** With `maxLeases`: how many leases the method takes (default 1). */
  leases?: number;
  /**
   * When the lock is busy: `'wait'` (default) queues up to `waitTimeoutMs`; `'skip'` tries once
   * and, when busy, does not run the method: it resolves with undefined (an empty Observable for
   * a method declared to return an Observable), logs at verbose level and emits `skipped`.
   */
  onBusy?: 'wait' | 'skip';
  /**
   * Keep the lock at least this long after it was taken, even when the method finished sooner
   * (ShedLock's "lock at least for"). For run-once jobs on instances whose clocks differ: set it
   * above the largest clock skew and below the job's period. The result is handed out at once.
   */
  minHoldMs?: number;
}

/**
 * Everything a call of a decorated method needs, built, checked and frozen once when the
 * decorator is applied (distributed-lock.spec-builder.ts); nothing fills it in later.
 */
export interface DistributedLockSpec {
  /** "Class.method", for messages. */
  readonly where: string;
  /** The class's name, for the advice when its instances have no LockService. */
  readonly owner: string;
  /** Parsed string template; undefined for the function form. */
  readonly template?: KeyTemplate;
  /** The function form, called with the method's arguments. */
  readonly pathFn?: (...args: any[]) => string | string[];
  /** A frozen copy of the options the decorator was given. */
  readonly options: Readonly<DistributedLockOptions>;
  /** Where each bare `<name>` comes from (key-template.sources.ts); string templates only. */
  readonly sources?: TemplateSources;
  /** The user's method's parameter names (of the innermost method when decorators stack). */
  readonly parameterNames: readonly (string | undefined)[];
  /**
   * The argument index of a `@Res()` (without passthrough): the handler sends the response
   * itself, maybe after it returned, so the lock is held until the response is sent.
   */
  readonly responseArg?: number;
  /** The method's declared return type is Observable: a skipped call gives an empty one. */
  readonly returnsObservable: boolean;
  /**
   * The path template that labels the call's lock events in metrics (docs/guides/
   * observability.md): the string template, passed as the call's `pathTemplate`. None for the
   * function form.
   */
  readonly metricsTemplate?: string;
}
