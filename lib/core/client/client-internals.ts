// Owns what the NestJS layer reaches of a ZkLockClient beyond its public API: off the class.
import type { ZooKeeperAuthFailedError } from '../errors';
import type { LockKind } from '../engine/lock-drivers';
import type { AcquireOptions, LockEvents, LockHandle, MultiLockHandle, Semaphore } from '../types';

/**
 * @internal The entries of one client that only this package's NestJS layer uses (its hold, its
 * event logger). Not methods of ZkLockClient, so they are neither in its declarations nor
 * reachable on an instance: the layer imports this module by its internal path.
 */
export interface ClientInternals {
  /**
   * The NestJS hold's way in (distributed-lock.hold.ts): withLock, or a read/write side's, for a
   * `path` its resolver validated already (key-template.resolver.ts), so that the path is
   * validated once; the namespace is applied here as for any path.
   */
  withValidLock<T>(
    path: string,
    kind: LockKind,
    fn: (lock: LockHandle) => Promise<T> | T,
    options: AcquireOptions,
  ): Promise<T>;
  /** withLockAll for `paths` the NestJS hold's resolver validated already (as withValidLock). */
  withValidLockAll<T>(
    paths: readonly string[],
    fn: (locks: MultiLockHandle) => Promise<T> | T,
    options: AcquireOptions,
  ): Promise<T>;
  /**
   * semaphore for a `path` the NestJS hold's resolver validated already (as withValidLock): only
   * the namespace is applied (and maxLeases checked, as always).
   */
  validSemaphore(path: string, maxLeases: number): Semaphore;
  /**
   * For the NestJS decorators' `onBusy: 'skip'`: a call tried once, found the lock busy and did
   * not run. Emits `skipped` for the event logger and metrics.
   */
  reportSkipped(skipped: LockEvents['skipped']): void;
  /**
   * The semaphore whose inner mutex `path` is (`<semaphore>/locks`, as the lock events show it)
   * while that semaphore is in use here; undefined for any other path. For the event logger,
   * which names the semaphore.
   */
  semaphoreOfMutex(path: string): string | undefined;
  /**
   * Why the connection gave up for good: the servers refused our credentials (the Nest layer's
   * log says so; no new session is tried).
   */
  readonly connectionFailure: ZooKeeperAuthFailedError | undefined;
  /**
   * What a request of this client takes at most to be answered while all is well, from the
   * replies seen (round-trips.ts); undefined before the first. The NestJS hold bounds its wait
   * for a release's reply with it.
   */
  readonly roundTripMs: number | undefined;
  /** The session timeout asked for (`sessionTimeoutMs`, or its default). */
  readonly sessionTimeoutMs: number;
}

/**
 * @internal Each client's internals, set by its constructor (`CLIENT_INTERNALS.get(client)`:
 * a map read, no call into this file on the acquire's way).
 */
export const CLIENT_INTERNALS = new WeakMap<object, ClientInternals>();
