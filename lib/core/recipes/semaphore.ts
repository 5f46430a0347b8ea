// The SemaphoreRecipe: counting semaphores laid out like Curator's InterProcessSemaphoreV2.
import {
  ClientClosedError,
  InvalidLockOptionsError,
  LockAbortedError,
  LockQueueFullError,
  LockTimeoutError,
  ZkLockError,
} from '../errors';
import { checkWaitTimeout } from '../engine/acquire-options';
import { inspectSemaphore } from './inspect';
import type {
  AcquireOptions,
  LeaseAcquireOptions,
  LockHandle,
  Semaphore,
  SemaphoreLease,
} from '../types';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { ZkSession } from '../zookeeper/zk-session';
import { isSessionGone } from '../zookeeper/zk-errors';
import { LEASE_NAME } from '../engine/lock-drivers';
import type { ParentReaper } from '../engine/parent-reaper';
import { DOUBTS_AFTER_WAIT, ProtectedNode } from '../engine/protected-node';
import { HeldLease } from './semaphore-lease';
import { SemaphoreLimits } from './semaphore-limit';
import { limitRecord } from '../engine/lock-path';
import { LeasesWatches, SessionEnded } from './semaphore-watch';
import { WaitEnd } from './semaphore-wait';

/** @internal What the semaphore needs from the client that owns it. */
export interface SemaphoreHost {
  /** The connection whose session a lock path uses (its `locks` and `leases` go with it). */
  connectionOf(lockPath: string): ZkConnection;
  readonly nodeData: Buffer;
  /** The lock path of `path` (namespace applied); throws InvalidLockPathError. */
  lockPathOf(path: string): string;
  acquire(path: string, options: AcquireOptions): Promise<LockHandle>;
  tryAcquire(path: string): Promise<LockHandle | null>;
  /** Runs a read-only look at `path` (inspect()): documented errors only, ClientClosedError once closed. */
  look<T>(path: string, read: (session: ZkSession) => Promise<T>): Promise<T>;
}

/** Curator InterProcessSemaphoreV2's layout (docs/design.md "The lock family"). */
const LOCKS = 'locks';
const LEASES = 'leases';

/**
 * @internal
 * Counting semaphores of one client: the acquire protocol, the one child watch per leases node
 * this client keeps while it waits, and the leases it holds (lost with their session, released
 * by close()).
 */
export class SemaphoreRecipe {
  private readonly leases = new Set<HeldLease>();
  private readonly busy = new Map<string, number>();
  /** One maxLeases per path: in this process, and as recorded on the leases node. */
  private readonly limits = new SemaphoreLimits();
  private readonly watches = new LeasesWatches();
  private readonly waits = new Set<WaitEnd>();
  /** Deletions still under way for callers that already got their answer. */
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly host: SemaphoreHost,
    /** Removes a leases node nothing of ours is left under; never one still busy here. */
    private readonly reaper: ParentReaper,
  ) {
    reaper.keepWhile((path) => this.busy.has(path));
  }

  /** Validates at once (InvalidLockPathError, InvalidLockOptionsError), before any request. */
  open(path: string, maxLeases: number): Semaphore {
    const lockPath = this.host.lockPathOf(path);
    if (!Number.isInteger(maxLeases) || maxLeases < 1) {
      throw new InvalidLockOptionsError(
        path,
        `maxLeases must be an integer >= 1 (got ${String(maxLeases)})`,
        'Pass the same maxLeases from every process that uses this semaphore',
      );
    }
    const take = (options: LeaseAcquireOptions, tryOnly: boolean): Promise<HeldLease | null> =>
      this.take(path, lockPath, maxLeases, options, tryOnly);
    return {
      path,
      maxLeases,
      acquire: (options = {}) => take(options, false) as Promise<SemaphoreLease>,
      tryAcquire: (options = {}) => take(options, true),
      withLease: async (fn, options = {}) => {
        const lease = (await take(options, false))!;
        try {
          return await fn(lease);
        } finally {
          await lease.release();
        }
      },
      inspect: () =>
        this.host.look(path, (session) =>
          inspectSemaphore(session, path, `${lockPath}/${LEASES}`, maxLeases),
        ),
    };
  }

  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    const detail = session.lossDetail(reason, 'the lease nodes');
    for (const lease of this.leases) if (lease.session === session) lease.lose(reason, detail);
    this.watches.onSessionLost(session);
  }

  onSuspended(session: ZkSession): void {
    for (const lease of this.leases) if (lease.session === session) lease.suspend();
  }

  onReconnected(session: ZkSession): void {
    for (const lease of this.leases) if (lease.session === session) lease.resume();
  }

  /** close(): waits end with ClientClosedError, held leases are released. */
  async close(): Promise<void> {
    for (const wait of this.waits) wait.clientClosed();
    await Promise.all(
      [...this.leases].map((lease) => {
        lease.lose('client-closed', 'the ZkLockClient was closed');
        return lease.release();
      }),
    );
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  private async take(
    path: string,
    lockPath: string,
    maxLeases: number,
    options: LeaseAcquireOptions,
    tryOnly: boolean,
  ): Promise<HeldLease | null> {
    const count = options.leases ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > maxLeases) {
      throw new InvalidLockOptionsError(
        path,
        `leases must be an integer from 1 to maxLeases (${maxLeases}), got ${String(count)}`,
        'Ask for fewer leases, or raise maxLeases in every process that uses this semaphore',
      );
    }
    checkWaitTimeout(path, options);
    const { waitTimeoutMs, signal } = options;
    // Its mutex's lock events are labelled by the mutex's path template, `<template>/locks`.
    const pathTemplate = options.pathTemplate && `${options.pathTemplate}/${LOCKS}`;
    if (signal?.aborted) throw new LockAbortedError(path, signal.reason);
    const deadline = waitTimeoutMs === undefined ? undefined : Date.now() + waitTimeoutMs;
    const leasesPath = `${lockPath}/${LEASES}`;
    this.limits.use(path, leasesPath, maxLeases);
    this.busy.set(leasesPath, (this.busy.get(leasesPath) ?? 0) + 1);
    const connection = this.host.connectionOf(leasesPath);
    const end = new WaitEnd({ path, deadline, waitTimeoutMs, signal, tryOnly }, connection);
    this.waits.add(end);
    try {
      for (;;) {
        end.check();
        const remaining = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
        const wait = { waitTimeoutMs: remaining, signal, pathTemplate };
        const mutex = await this.takeMutex(path, wait, tryOnly);
        if (!mutex) return null;
        const leases = { path, leasesPath, maxLeases, count, tryOnly };
        // Answered by the end of its wait even while the attempt is stuck in an outage: the
        // attempt then finishes in the background (close() waits for it) and deletes its nodes.
        const attempt = this.takeLeases(leases, end, mutex);
        this.background(leasesPath, attempt);
        try {
          return await end.race(attempt, (lease) => void lease?.release());
        } catch (err) {
          // The session ended while we held the mutex: start again in the new one.
          if (!(err instanceof SessionEnded) && !isSessionGone(err))
            throw this.documented(path, err);
        }
      }
    } finally {
      end.dispose();
      this.waits.delete(end);
      this.limits.unuse(leasesPath);
      this.done(leasesPath);
    }
  }

  /**
   * The semaphore whose mutex `path` is (`<semaphore>/locks`, namespace not applied, as events
   * show it), while an acquire, a try or a lease of that semaphore is under way here.
   */
  semaphoreOfMutex(path: string): string | undefined {
    if (!path.endsWith(`/${LOCKS}`)) return undefined;
    const semaphore = path.slice(0, -LOCKS.length - 1);
    try {
      return this.busy.has(`${this.host.lockPathOf(semaphore)}/${LEASES}`) ? semaphore : undefined;
    } catch {
      return undefined; // not a lock path (InvalidLockPathError): no semaphore of ours
    }
  }

  /** The mutex that serialises acquirers; its errors name the semaphore, not `<path>/locks`. */
  private async takeMutex(
    path: string,
    options: AcquireOptions,
    tryOnly: boolean,
  ): Promise<LockHandle | null> {
    const mutexPath = `${path}/${LOCKS}`;
    try {
      if (tryOnly) return await this.host.tryAcquire(mutexPath);
      return await this.host.acquire(mutexPath, options);
    } catch (err) {
      if (err instanceof LockTimeoutError) {
        throw new LockTimeoutError(path, err.waitTimeoutMs, err.queue ?? err.ahead);
      }
      if (err instanceof LockAbortedError) throw new LockAbortedError(path, err.cause);
      if (err instanceof ClientClosedError) throw new ClientClosedError(path);
      if (err instanceof LockQueueFullError) {
        throw new LockQueueFullError(path, err.option, err.limit);
      }
      throw err;
    }
  }

  /**
   * Holding the semaphore's mutex (released when done): creates the lease nodes, waiting for
   * room after each, until `end` (then deletes them).
   */
  private async takeLeases(
    w: { path: string; leasesPath: string; maxLeases: number; count: number; tryOnly: boolean },
    end: WaitEnd,
    mutex: LockHandle,
  ): Promise<HeldLease | null> {
    const nodes: ProtectedNode[] = [];
    let session: ZkSession;
    try {
      session = await end.session();
      const untilUsable = (): Promise<void> => end.untilUsable(session);
      // A create in doubt is found even after the end, or its node would count as a lease for
      // as long as the session lives; once nobody waits, for a bounded number of answers.
      let doubts = 0;
      const recovery = {
        keepGoing: () => !end.error || ++doubts <= DOUBTS_AFTER_WAIT,
        usable: end.usable,
      };
      for (let i = 0; i < w.count; i++) {
        end.check();
        const node = new ProtectedNode(w.leasesPath, LEASE_NAME, this.host.nodeData);
        nodes.push(node);
        const pending = i === 0 ? this.limits.readBeforeCreate(session, w.leasesPath) : undefined;
        await node.create(session, limitRecord(w.maxLeases), recovery);
        for (let claimed = i > 0; ;) {
          end.check(); // before it, `node.name` is undefined only if recovery gave up after the end
          const { children, changed, stamp } = await this.watches.list(
            session,
            w.leasesPath,
            untilUsable,
          );
          if (!children.includes(node.name!)) {
            // deleted under us: queue again
            await node.create(session, limitRecord(w.maxLeases), recovery);
            continue;
          }
          if (!claimed) {
            await this.limits.claim(session, w, stamp, pending, untilUsable);
            claimed = true;
          }
          if (children.length <= w.maxLeases) {
            // Granted only on a session proven alive, like a lock (docs/design.md "What holding
            // means"): a listing read after this process stalled may describe a session the
            // server has expired since. Listing again asks the server now: its answer proves the session or ends it.
            if (session.checkProvenAlive()) break;
            await untilUsable();
            continue;
          }
          if (w.tryOnly) {
            this.removeAll(w.leasesPath, nodes);
            return null;
          }
          await end.waitForRoom(changed, children.length - w.maxLeases);
          if (!session.alive) throw new SessionEnded();
        }
      }
      // As a lock's waiter: an end that came during the last requests takes no lease.
      end.check();
    } catch (err) {
      this.removeAll(w.leasesPath, nodes);
      throw err;
    } finally {
      this.background(w.leasesPath, mutex.release());
    }
    const connection = this.host.connectionOf(w.leasesPath);
    const lease = new HeldLease(w.path, session, nodes, connection, (l) =>
      this.leaseEnded(l, w.leasesPath),
    );
    this.leases.add(lease);
    this.limits.use(w.path, w.leasesPath, w.maxLeases);
    this.busy.set(w.leasesPath, (this.busy.get(w.leasesPath) ?? 0) + 1);
    return lease;
  }

  /** Only documented errors reach callers (an unexpected server answer is a ZkLockError). */
  private documented(path: string, err: unknown): unknown {
    if (err instanceof ZkLockError) return err;
    return new ZkLockError(
      `ZooKeeper refused a request for semaphore "${path}": ${(err as Error)?.message ?? String(err)}. ` +
        'Check the lock path, ACLs and quotas on the server.',
      { cause: err },
    );
  }

  private leaseEnded(lease: HeldLease, leasesPath: string): void {
    if (!this.leases.delete(lease)) return;
    this.limits.unuse(leasesPath);
    this.done(leasesPath);
  }

  /**
   * Deletes the nodes of an attempt that gave up without making its caller wait for it (during
   * an outage that can take until the session is gone); close() waits for it.
   */
  private removeAll(leasesPath: string, nodes: readonly ProtectedNode[]): void {
    this.background(leasesPath, Promise.all(nodes.map((n) => n.remove())));
  }

  /** Keeps the leases node from cleanup, and close() waiting, until `work` is done. */
  private background(leasesPath: string, work: Promise<unknown>): void {
    this.busy.set(leasesPath, (this.busy.get(leasesPath) ?? 0) + 1);
    const tracked = work
      .catch(() => undefined)
      .finally(() => {
        this.inflight.delete(tracked);
        this.done(leasesPath);
      });
    this.inflight.add(tracked);
  }

  private done(leasesPath: string): void {
    const left = (this.busy.get(leasesPath) ?? 1) - 1;
    if (left > 0) return void this.busy.set(leasesPath, left);
    this.busy.delete(leasesPath);
    this.reaper.schedule(leasesPath);
  }
}
