// Owns LockService: the application's entry to locks, with the module's default wait.
import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { ZkLockClient } from '../../core/client/lock-client';
import type {
  AcquireOptions,
  ConnectionState,
  LockEvents,
  LockHandle,
  LeaseAcquireOptions,
  LockInspection,
  LockSide,
  LockView,
  MultiLockHandle,
  Semaphore,
  SemaphoreLease,
  SemaphoreOptions,
} from '../../core/types';
import { InjectZkLockClient } from '../decorators/inject-zk-lock-client.decorator';
import { ZkLockEventLogger } from '../module/zk-lock.event-logger';
import type { ZkLockModuleOptions } from '../module/zk-lock-module-options.interface';
import { ZK_LOCK_MODULE_OPTIONS } from '../module/zk-lock.module-definition';

/**
 * The wait of a decorated handler call when neither its decorator nor the module sets one, and
 * the module sets no `handlerWaitTimeoutMs` (docs/reference/options.md "Waits"). Not forever: a
 * client or the proxy in front gives up after a while (60 s is the common default of nginx, AWS
 * ALB and many clients), a wait that outlives its caller runs the handler for nobody, its lock
 * turn taken from the callers still waiting, and a caller that never gives up (a stuck
 * WebSocket, an RPC client without a timeout) would hold its place among the path's
 * `maxWaitersPerPath` for good. 30 s answers a 409 a client can act on before its own timeout,
 * and is far above a lock turn of a well-behaved handler.
 */
export const HANDLER_WAIT_MS = 30_000;

/**
 * The application's entry to locks: the core client's methods for manual use, lock inspection
 * for operators, and events for metrics. `@DistributedLock` methods find the client through it
 * (distributed-lock.hold.ts), with its `defaultWaitTimeoutMs`.
 */
@Injectable()
export class LockService implements OnModuleInit, OnApplicationShutdown {
  private readonly eventLogger: ZkLockEventLogger;
  /**
   * The module option `waitTimeoutMs`: the wait of every call that sets none, decorated methods
   * and this service's own (docs/reference/options.md "Waits").
   */
  readonly defaultWaitTimeoutMs: number | undefined;
  /**
   * The wait of a decorated handler call when neither its decorator nor `defaultWaitTimeoutMs`
   * sets one: the module option `handlerWaitTimeoutMs`, else HANDLER_WAIT_MS.
   */
  readonly handlerWaitTimeoutMs: number;

  constructor(
    @InjectZkLockClient() readonly client: ZkLockClient,
    // Only what it needs is kept: the options also hold the credentials (`auth`, `tls`).
    @Inject(ZK_LOCK_MODULE_OPTIONS) options: ZkLockModuleOptions,
  ) {
    this.eventLogger = new ZkLockEventLogger(client);
    this.defaultWaitTimeoutMs = options.waitTimeoutMs;
    this.handlerWaitTimeoutMs = options.handlerWaitTimeoutMs ?? HANDLER_WAIT_MS;
  }

  get state(): ConnectionState {
    return this.client.state;
  }

  acquire(path: string, options?: AcquireOptions): Promise<LockHandle> {
    return this.client.acquire(path, this.waitOf(options));
  }

  tryAcquire(path: string): Promise<LockHandle | null> {
    return this.client.tryAcquire(path);
  }

  withLock<T>(
    path: string,
    fn: (lock: LockHandle) => Promise<T> | T,
    options?: AcquireOptions,
  ): Promise<T> {
    return this.client.withLock(path, fn, this.waitOf(options));
  }

  /** The read side of the read/write lock on `path` (see ZkLockClient.readLock). */
  readLock(path: string): LockSide {
    return this.sideWithDefaults(this.client.readLock(path));
  }

  /** The write side of the read/write lock on `path` (see ZkLockClient.writeLock). */
  writeLock(path: string): LockSide {
    return this.sideWithDefaults(this.client.writeLock(path));
  }

  /** A counting semaphore: at most `maxLeases` holders of `path` across instances. */
  semaphore(path: string, options: SemaphoreOptions): Semaphore {
    const semaphore = this.client.semaphore(path, options);
    return Object.assign(Object.create(semaphore) as Semaphore, {
      acquire: (o?: LeaseAcquireOptions) => semaphore.acquire(this.waitOf(o)),
      withLease: <T>(fn: (lease: SemaphoreLease) => Promise<T> | T, o?: LeaseAcquireOptions) =>
        semaphore.withLease(fn, this.waitOf(o)),
    });
  }

  /** Several paths as one lock, all or nothing, in one canonical order (no deadlock). */
  acquireAll(paths: readonly string[], options?: AcquireOptions): Promise<MultiLockHandle> {
    return this.client.acquireAll(paths, this.waitOf(options));
  }

  withLockAll<T>(
    paths: readonly string[],
    fn: (locks: MultiLockHandle) => Promise<T> | T,
    options?: AcquireOptions,
  ): Promise<T> {
    return this.client.withLockAll(paths, fn, this.waitOf(options));
  }

  /** Whether the current async context (request, job...) holds `path`. */
  isHeld(path: string): boolean {
    return this.client.isHeld(path);
  }

  /**
   * The lock on `path` (the concrete path, template resolved) that the current request, job or
   * `@DistributedLock` method holds, e.g. `locks.current(path)?.fencingToken`; undefined when
   * it holds none. Read-only: no release(), and reading it does not extend the hold.
   */
  current(path: string): LockView | undefined {
    return this.client.heldLock(path);
  }

  /** Who holds `path` and who waits: node names, session ids, and host/pid/app of each. */
  inspect(path: string): Promise<LockInspection> {
    return this.client.inspect(path);
  }

  /** Metrics: acquired (waitMs), released (holdMs), timeout, lost, state. */
  on<E extends keyof LockEvents>(event: E, listener: (payload: LockEvents[E]) => void): this {
    this.client.on(event, listener);
    return this;
  }

  off<E extends keyof LockEvents>(event: E, listener: (payload: LockEvents[E]) => void): this {
    this.client.off(event, listener);
    return this;
  }

  /** A call's options with the module's `waitTimeoutMs` when the call sets none. */
  private waitOf<O extends AcquireOptions>(options: O | undefined): O | undefined {
    if (this.defaultWaitTimeoutMs === undefined || options?.waitTimeoutMs !== undefined) {
      return options;
    }
    return { ...options, waitTimeoutMs: this.defaultWaitTimeoutMs } as O;
  }

  /** A read or write side whose waits take the module's default. */
  private sideWithDefaults(side: LockSide): LockSide {
    return Object.assign(Object.create(side) as LockSide, {
      acquire: (o?: AcquireOptions) => side.acquire(this.waitOf(o)),
      withLock: <T>(fn: (lock: LockHandle) => Promise<T> | T, o?: AcquireOptions) =>
        side.withLock(fn, this.waitOf(o)),
    });
  }

  onModuleInit(): void {
    this.eventLogger.start();
  }

  /** Releases every held lock and closes the session, so other instances get them at once. */
  async onApplicationShutdown(): Promise<void> {
    try {
      await this.client.close();
    } finally {
      this.eventLogger.stop();
    }
  }
}
