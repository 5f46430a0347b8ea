import type { KeyTemplate } from '../runtime/key-template';
import type { TemplateSources } from '../runtime/key-template.sources';

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
   * a method declared to return an Observable), logs at debug level and emits `skipped`.
   */
  onBusy?: 'wait' | 'skip';
  /**
   * Keep the lock at least this long after it was taken, even when the method finished sooner
   * (ShedLock's "lock at least for"). For run-once jobs on instances whose clocks differ: set it
   * above the largest clock skew and below the job's period. The result is handed out at once.
   */
  minHoldMs?: number;
}

/** What the decorator records on the method for the wrapper and the interceptor. */
export interface DistributedLockSpec {
  /** "Class.method", for messages. */
  where: string;
  /** Parsed string template; undefined for the function form. */
  template?: KeyTemplate;
  /** The function form, called with the method's arguments. */
  pathFn?: (...args: any[]) => string | string[];
  options: DistributedLockOptions;
  /**
   * The argument index of a `@Res()` (without passthrough): the handler sends the response
   * itself, maybe after it returned, so the lock is held until the response is sent.
   */
  responseArg?: number;
  /** Where each bare `<name>` comes from (key-template.sources.ts); string templates only. */
  sources?: TemplateSources;
}
