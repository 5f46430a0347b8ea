// The SemaphoreRecipe: counting semaphores laid out like Curator's InterProcessSemaphoreV2, and
// their one maxLeases per path, in this process and recorded in ZooKeeper.
import {
  ClientClosedError,
  InvalidLockOptionsError,
  LockAbortedError,
  LockModeError,
  LockQueueFullError,
  LockTimeoutError,
} from '../errors';
import { HeldResource } from '../engine/held-lock';
import { LEASE_NAME } from '../engine/lock-drivers';
import { DOUBTS_AFTER_WAIT, ProtectedNode, limitRecord, recordedLimit } from '../engine/contender';
import {
  checkWaitTimeout,
  documentedError,
  noSessionForTry,
  waitTimeoutError,
  type ParentReaper,
} from '../engine/waiter-queue';
import type {
  AcquireOptions,
  LeaseAcquireOptions,
  LockHandle,
  Semaphore,
  SemaphoreLease,
} from '../types';
import type { ZkConnection } from '../zookeeper/zk-connection';
import { ZkCode, codeOf, isInDoubt, isNoNode, isSessionGone } from '../zookeeper/zk-errors';
import type { Watcher } from '../zookeeper/zk-client';
import type { ZkSession } from '../zookeeper/zk-session';
import { inspectSemaphore } from './inspect';

/** @internal What the semaphore needs from the client that owns it. */
export interface SemaphoreHost {
  /** The connection whose session a lock path uses (its `locks` and `leases` go with it). */
  connectionOf(lockPath: string): ZkConnection;
  readonly nodeData: Buffer;
  /** The lock path of `path` (namespace applied); throws InvalidLockPathError. */
  lockPathOf(path: string): string;
  acquire(path: string, options: AcquireOptions): Promise<LockHandle>;
  tryAcquire(path: string): Promise<LockHandle | null>;
  /** Runs a read-only look at `path` (inspect()): documented errors; closed: ClientClosedError. */
  look<T>(path: string, read: (session: ZkSession) => Promise<T>): Promise<T>;
}

/** Curator InterProcessSemaphoreV2's layout (docs/design.md "The lock family"). */
const LOCKS = 'locks';
const LEASES = 'leases';

/** The session ended while we waited for room: try again in the new one, if time is left. */
class SessionEnded extends Error {}

/** One acquire of leases on a semaphore path. */
interface Ask {
  path: string;
  leasesPath: string;
  maxLeases: number;
  count: number;
  tryOnly: boolean;
}

/** A listing of the leases, with the child watch that fires when they change. */
interface LeasesListing {
  children: string[];
  changed: Promise<void>;
  stamp: LeasesStamp;
}

/**
 * @internal
 * Counting semaphores of one client: the acquire protocol, one child watch per leases node while
 * waiting, and the leases it holds (lost with their session, released by close()).
 */
export class SemaphoreRecipe {
  private readonly leases = new Set<HeldLease>();
  /** Per leases node: acquires, leases and background work under way (kept from cleanup). */
  private readonly busy = new Map<string, number>();
  /** One maxLeases per path: in this process, and as recorded on the leases node. */
  private readonly limits = new SemaphoreLimits();
  private readonly watches = new Map<
    string,
    { session: ZkSession; changed: Promise<void>; fire: () => void }
  >();
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

  /** Its leases are lost; every child watch armed in it fires (its waits find the session gone). */
  onSessionLost(session: ZkSession, reason: 'session-expired' | 'connection-lost'): void {
    const detail = session.lossDetail(reason, 'the lease nodes');
    for (const lease of this.leases) if (lease.session === session) lease.lose(reason, detail);
    for (const [path, watch] of this.watches) {
      if (watch.session !== session) continue;
      this.watches.delete(path);
      watch.fire();
    }
  }

  onSuspended(session: ZkSession): void {
    for (const lease of this.leases) if (lease.session === session) lease.suspend();
  }

  onReconnected(session: ZkSession): void {
    for (const lease of this.leases) if (lease.session === session) lease.reconnected();
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

  /** The semaphore whose mutex is `path` (`<semaphore>/locks` as events show it), while in use. */
  semaphoreOfMutex(path: string): string | undefined {
    if (!path.endsWith(`/${LOCKS}`)) return undefined;
    const semaphore = path.slice(0, -LOCKS.length - 1);
    try {
      return this.busy.has(`${this.host.lockPathOf(semaphore)}/${LEASES}`) ? semaphore : undefined;
    } catch {
      return undefined; // not a lock path (InvalidLockPathError): no semaphore of ours
    }
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
    const ask: Ask = { path, leasesPath: `${lockPath}/${LEASES}`, maxLeases, count, tryOnly };
    this.use(ask);
    const connection = this.host.connectionOf(ask.leasesPath);
    const end = new WaitEnd({ path, deadline, waitTimeoutMs, signal, tryOnly }, connection);
    this.waits.add(end);
    try {
      for (;;) {
        end.check();
        const remaining = deadline === undefined ? undefined : Math.max(0, deadline - Date.now());
        const wait = { waitTimeoutMs: remaining, signal, pathTemplate };
        const mutex = await this.takeMutex(path, wait, tryOnly);
        if (!mutex) return null;
        // Answered by the end of its wait even while the attempt is stuck in an outage: the
        // attempt then finishes in the background (close() waits for it) and deletes its nodes.
        const attempt = this.takeLeases(ask, end, mutex);
        this.background(ask.leasesPath, attempt);
        try {
          return await end.race(attempt, (lease) => void lease?.release());
        } catch (err) {
          // The session ended while we held the mutex: start again in the new one.
          if (!(err instanceof SessionEnded) && !isSessionGone(err)) {
            throw documentedError(err, path, connection);
          }
        }
      }
    } finally {
      end.dispose();
      this.waits.delete(end);
      this.unuse(ask.leasesPath);
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

  /** Holding the mutex: creates lease nodes, waiting for room after each; `end` deletes them. */
  private async takeLeases(w: Ask, end: WaitEnd, mutex: LockHandle): Promise<HeldLease | null> {
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
          const { children, changed, stamp } = await this.list(session, w.leasesPath, untilUsable);
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
            // means"): a listing read after a stall may describe an expired session; listing
            // again asks the server, whose answer proves the session or ends it.
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
    const lease = new HeldLease(w.path, session, nodes, connection, (l) => {
      if (this.leases.delete(l)) this.unuse(w.leasesPath);
    });
    this.leases.add(lease);
    this.use(w);
    return lease;
  }

  /** Lists the leases; asks again after a request in doubt once `untilUsable()` resolved. */
  private async list(
    session: ZkSession,
    leasesPath: string,
    untilUsable: () => Promise<void>,
  ): Promise<LeasesListing> {
    for (;;) {
      try {
        return await this.listOnce(session, leasesPath);
      } catch (err) {
        if (!isInDoubt(err)) throw err;
        await untilUsable();
      }
    }
  }

  /** Lists the leases; keeps one child watch per leases node armed (no pile-up of watches). */
  private async listOnce(session: ZkSession, leasesPath: string): Promise<LeasesListing> {
    const armed = this.watches.get(leasesPath);
    if (armed?.session === session) {
      const { children, czxid, version } = await session.getChildren(leasesPath);
      return { children, changed: armed.changed, stamp: { czxid, version } };
    }
    let fire!: () => void;
    const changed = new Promise<void>((resolve) => (fire = resolve));
    const entry = { session, changed, fire };
    this.watches.set(leasesPath, entry);
    const forget = (): void => {
      if (this.watches.get(leasesPath) === entry) this.watches.delete(leasesPath);
    };
    try {
      const { children, czxid, version } = await session.getChildren(leasesPath, () => {
        forget();
        fire();
      });
      return { children, changed, stamp: { czxid, version } };
    } catch (err) {
      forget();
      throw err;
    }
  }

  /** Deletes a given-up attempt's nodes without making its caller wait (close() waits). */
  private removeAll(leasesPath: string, nodes: readonly ProtectedNode[]): void {
    this.background(leasesPath, Promise.all(nodes.map((n) => n.remove())));
  }

  /** Keeps the leases node from cleanup, and close() waiting, until `work` is done. */
  private background(leasesPath: string, work: Promise<unknown>): void {
    this.enter(leasesPath);
    const tracked = work
      .catch(() => undefined)
      .finally(() => {
        this.inflight.delete(tracked);
        this.done(leasesPath);
      });
    this.inflight.add(tracked);
  }

  /** An acquire or a lease starts: its limit counts, its leases node is busy. */
  private use(w: Ask): void {
    this.limits.use(w.path, w.leasesPath, w.maxLeases);
    this.enter(w.leasesPath);
  }

  private unuse(leasesPath: string): void {
    this.limits.unuse(leasesPath);
    this.done(leasesPath);
  }

  private enter(leasesPath: string): void {
    this.busy.set(leasesPath, (this.busy.get(leasesPath) ?? 0) + 1);
  }

  private done(leasesPath: string): void {
    const left = (this.busy.get(leasesPath) ?? 1) - 1;
    if (left > 0) return void this.busy.set(leasesPath, left);
    this.busy.delete(leasesPath);
    this.reaper.schedule(leasesPath);
  }
}

/**
 * Leases held on one semaphore path, one ephemeral node each; lost with the session or a node
 * deleted by others (watched as a held lock's). release() deletes them as a Contender does.
 */
class HeldLease extends HeldResource implements SemaphoreLease {
  private releasing?: Promise<void>;
  /** Lease nodes whose watch is set or under way; one that went unanswered is asked for again. */
  private readonly armed = new Set<ProtectedNode>();
  /** Someone can be told of a loss (watchForLoss): the nodes stay watched from then on. */
  private wanted = false;
  private readonly watchers = new Map<ProtectedNode, Watcher>();

  constructor(
    path: string,
    readonly session: ZkSession,
    private readonly nodes: readonly ProtectedNode[],
    /** The connection of `session` (a lost session's nodes are deleted through its next one). */
    private readonly connection: ZkConnection,
    private readonly onEnd: (lease: HeldLease) => void,
  ) {
    super(path, () => this.watchLeaseNodes());
  }

  /** The same session is back: a watch asked for while it was away may not have been set. */
  reconnected(): void {
    this.resume();
    if (this.wanted && this.active) this.watchLeaseNodes();
  }

  /** One watch per lease node, as a held lock's own node (Contender.armOwn). */
  private watchLeaseNodes(): void {
    this.wanted = true;
    for (const node of this.nodes) {
      if (this.armed.has(node)) continue;
      this.armed.add(node);
      this.session.getData(node.path, this.watcherOf(node)).catch((err) => {
        this.armed.delete(node);
        if (isNoNode(err)) this.vanished(node);
      });
    }
  }

  /** One callback per node, so asking again adds none to the session's watches. */
  private watcherOf(node: ProtectedNode): Watcher {
    let watcher = this.watchers.get(node);
    if (!watcher) {
      watcher = (event) => {
        this.armed.delete(node);
        if (!this.active) return;
        if (event.name === 'NODE_DELETED') this.vanished(node);
        else this.watchLeaseNodes(); // a change of its data: watched again
      };
      this.watchers.set(node, watcher);
    }
    return watcher;
  }

  private vanished(node: ProtectedNode): void {
    if (this.state === 'released') return;
    this.lose('node-deleted', `lease node ${node.path} was deleted by another client`);
  }

  get leases(): number {
    return this.nodes.length;
  }

  release(): Promise<void> {
    // As a lock's release (HeldLock.exit): a lease released right after its process was paused
    // or blocked past the session timeout is told lost first.
    if (!this.releasing && this.active) this.session.checkLiveness();
    this.releasing ??= this.releaseOnce();
    return this.releasing;
  }

  private async releaseOnce(): Promise<void> {
    if (this.state !== 'lost') this.state = 'released';
    // A session our clock declared lost may live on in a restored server for a session timeout:
    // delete through the current session, as Contender.remove (the uuids make them ours).
    if (this.lostError?.reason !== 'session-expired') {
      const current = this.connection.current;
      await Promise.all(this.nodes.map((n) => n.remove(current)));
    }
    this.onEnd(this);
  }
}

/**
 * The end of one acquire's wait, whichever first: its signal (LockAbortedError), close()
 * (ClientClosedError), or its deadline during a wait (LockTimeoutError, or
 * ZooKeeperUnavailableError without a session). The deadline bounds waits, not requests, as in
 * Curator. `error` is set synchronously, so a grant checked after it takes no lease.
 */
class WaitEnd {
  /** Why the caller stopped waiting; undefined while it waits. */
  error?: Error;
  private readonly stops = new Set<(err: Error) => void>();
  private timer?: NodeJS.Timeout;
  private overdue = false;
  /** Waits under way: the deadline ends the caller's wait only during one. */
  private waits = 0;
  /** How many are ahead by the last listing: for the timeout's message. */
  private ahead?: number;

  constructor(
    private readonly w: {
      path: string;
      deadline?: number;
      waitTimeoutMs?: number;
      signal?: AbortSignal;
      /** tryAcquire: waits for nothing; a wait for the connection ends at once (a lock's try). */
      tryOnly?: boolean;
    },
    /** The connection of the semaphore's session: tells a busy semaphore from an outage. */
    private readonly connection: ZkConnection,
  ) {
    // Not aborted yet: take() checked the signal just before.
    w.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (w.tryOnly) this.overdue = true;
    else if (w.deadline !== undefined) {
      this.timer = setTimeout(this.onDeadline, Math.max(0, w.deadline - Date.now()));
    }
  }

  /** The client is closing (its close()): ClientClosedError. */
  clientClosed(): void {
    this.end(new ClientClosedError(this.w.path));
  }

  /** Throws the end, if it came. */
  check(): void {
    if (this.error) throw this.error;
  }

  /** `step`, or the end if it comes first; a value `step` yields after the end goes to `orphan`. */
  race<T>(step: Promise<T>, orphan?: (value: T) => void): Promise<T> {
    return this.settle(step, false, orphan);
  }

  /** Until the leases change (`changed`) with `ahead` more than the limit, or the end. */
  waitForRoom(changed: Promise<void>, ahead: number): Promise<void> {
    this.ahead = ahead;
    return this.settle(changed, true);
  }

  /** The semaphore's session, once connected (a wait), or the end. */
  session(): Promise<ZkSession> {
    const ready = this.connection.ready();
    return this.connection.current.state === 'connected' ? ready : this.settle(ready, true);
  }

  /** Until the session is usable again (a wait), or the end: SessionEnded if it is gone. */
  async untilUsable(session: ZkSession): Promise<void> {
    if (session.state === 'connected') return;
    if (!(await this.settle(session.whenUsable(), true))) throw new SessionEnded();
  }

  /**
   * Recovery of a create in doubt must find its node whatever the caller does: its wait for the
   * connection outlives the caller's, which the deadline may end (ProtectedNode.recover).
   */
  readonly usable = (session: ZkSession): Promise<boolean> => {
    if (session.state === 'connected') return Promise.resolve(true);
    this.enterWait();
    return session.whenUsable().finally(() => this.waits--);
  };

  /** Stops listening (the acquire is answered): no timer or listener is left. */
  dispose(): void {
    clearTimeout(this.timer);
    this.w.signal?.removeEventListener('abort', this.onAbort);
  }

  /** `step`, or the end first; `isWait`: the deadline may end it (waits for room, a session). */
  private settle<T>(step: Promise<T>, isWait: boolean, orphan?: (value: T) => void): Promise<T> {
    if (isWait) this.enterWait();
    if (this.error) {
      if (isWait) this.waits--;
      if (orphan) void step.then(orphan, () => undefined);
      return Promise.reject(this.error);
    }
    return new Promise<T>((resolve, reject) => {
      let ended = false;
      const stop = (err: Error): void => {
        ended = true;
        reject(err);
      };
      this.stops.add(stop);
      const done = (): void => {
        this.stops.delete(stop);
        if (isWait) this.waits--;
      };
      step.then(
        (value) => {
          done();
          if (ended) orphan?.(value);
          else resolve(value);
        },
        (err: unknown) => {
          done();
          reject(err);
        },
      );
    });
  }

  private enterWait(): void {
    this.waits++;
    if (this.overdue) this.end(this.timeout());
  }

  private readonly onAbort = (): void =>
    this.end(new LockAbortedError(this.w.path, this.w.signal!.reason));

  private readonly onDeadline = (): void => {
    this.overdue = true;
    if (this.waits > 0) this.end(this.timeout());
  };

  private timeout(): Error {
    if (this.w.tryOnly) return noSessionForTry(this.connection, this.w.path);
    return waitTimeoutError(this.connection, this.w.path, this.w.waitTimeoutMs!, this.ahead);
  }

  private end(err: Error): void {
    if (this.error) return;
    this.error = err;
    this.dispose();
    for (const stop of this.stops) stop(err);
    this.stops.clear();
  }
}

/** The leases node as one read saw it: `version` and `czxid` identify its data over time. */
interface LimitRead {
  data: Buffer | null;
  czxid: bigint;
  version: number;
  leases: number;
}
/** A read of the leases node: null when it does not exist, 'again' when the answer was lost. */
type PendingRead = Promise<LimitRead | null | 'again'>;
/** What a listing of the leases node tells about its data (czxid and data version). */
interface LeasesStamp {
  czxid: bigint;
  version: number;
}

const stampOf = (s: LeasesStamp): string => `${s.czxid}/${s.version}`;

/** The limits this process uses, per leases node, while an acquire or a lease is under way. */
class SemaphoreLimits {
  /** `verified`: the stamp of the leases node last seen recording `maxLeases`. */
  private readonly byPath = new Map<
    string,
    { maxLeases: number; users: number; verified?: string }
  >();

  /** Counts a user of `leasesPath` (an acquire, a lease); LockModeError if it has another limit. */
  use(path: string, leasesPath: string, maxLeases: number): void {
    const inUse = this.byPath.get(leasesPath);
    if (inUse && inUse.maxLeases !== maxLeases) {
      throw limitMismatch(path, inUse.maxLeases, maxLeases, 'in this process');
    }
    if (inUse) inUse.users++;
    else this.byPath.set(leasesPath, { maxLeases, users: 1 });
  }

  /** Forgets the path (and its verified record) when its last user is gone. */
  unuse(leasesPath: string): void {
    const inUse = this.byPath.get(leasesPath);
    if (inUse && --inUse.users === 0) this.byPath.delete(leasesPath);
  }

  /**
   * Just before the first lease node's create: reads the record in the same round trip, unless one
   * was verified (the listing's stamp then tells), so it counts only the others' leases.
   */
  readBeforeCreate(session: ZkSession, leasesPath: string): PendingRead | undefined {
    if (this.byPath.get(leasesPath)?.verified) return undefined;
    const read = readLimit(session, leasesPath);
    read.catch(() => undefined); // awaited by claim(), unless the create fails first
    return read;
  }

  /**
   * Holding the mutex, after the first listing showing our first lease node: LockModeError when
   * other leases stand behind another recorded limit, else ours is recorded. A read in doubt is
   * asked again once `untilUsable()` resolved.
   */
  async claim(
    session: ZkSession,
    w: Ask,
    listed: LeasesStamp,
    pending: PendingRead | undefined,
    untilUsable: () => Promise<void>,
  ): Promise<void> {
    const entry = this.byPath.get(w.leasesPath);
    if (!entry) return;
    if (entry.verified === stampOf(listed)) return; // our record, unchanged since
    let read = pending ? await pending : 'again'; // 'again': read it now
    let own = pending ? 0 : 1; // a pending read was answered before our create
    for (;;) {
      if (read === 'again') await untilUsable();
      if (read !== 'again' && read !== null) {
        const written = await this.check(session, w, read, own);
        if (written) return void (entry.verified = stampOf(written));
      }
      own = 1;
      read = await readLimit(session, w.leasesPath);
      if (read === null) return; // gone with our node: the acquirer's listing sees that
    }
  }

  /** The stamp of the record once it is ours; undefined to read again (changed meanwhile). */
  private async check(
    session: ZkSession,
    w: Ask,
    read: LimitRead,
    own: number,
  ): Promise<LeasesStamp | undefined> {
    const recorded = recordedLimit(read.data);
    if (recorded === w.maxLeases) return read;
    if (recorded !== undefined && read.leases - own > 0) {
      throw limitMismatch(
        w.path,
        recorded,
        w.maxLeases,
        `recorded on "${w.leasesPath}" by the processes holding its leases`,
      );
    }
    try {
      await session.setData(w.leasesPath, limitRecord(w.maxLeases), read.version);
      return { czxid: read.czxid, version: read.version + 1 };
    } catch (err) {
      // Changed or removed meanwhile, or the answer was lost: read again.
      if (codeOf(err) !== ZkCode.BAD_VERSION && !isNoNode(err) && !isInDoubt(err)) throw err;
      return undefined;
    }
  }
}

/** Two limits on one semaphore: `where` says who uses the other one. */
function limitMismatch(path: string, inUse: number, asked: number, where: string): LockModeError {
  return new LockModeError(
    path,
    `the semaphore is in use with maxLeases ${inUse} (${where}) and this call asks for ` +
      `maxLeases ${asked}; two limits on one path would let in more holders than the smaller allows`,
    'Pass the same maxLeases from every process that uses this semaphore; to change it, let ' +
      'every lease of the old limit go first',
  );
}

async function readLimit(session: ZkSession, leasesPath: string): PendingRead {
  try {
    const { data, stat } = await session.getData(leasesPath);
    return {
      data,
      czxid: stat.czxid.readBigUInt64BE(0),
      version: stat.version,
      leases: stat.numChildren,
    };
  } catch (err) {
    if (isNoNode(err)) return null;
    if (isInDoubt(err)) return 'again';
    throw err;
  }
}
