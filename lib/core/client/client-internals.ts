// The diagnostics the NestJS layer reads of a ZkLockClient beyond its public API: off the class.
import type { ZooKeeperAuthFailedError } from '../errors';

/**
 * @internal What only this package's NestJS layer reads of one client (its hold's bound on a
 * release's answer, its event logger): no way to take a lock, which goes through the public API.
 * Not members of ZkLockClient, so they are neither in its declarations nor reachable on an
 * instance: the layer imports this module by its internal path.
 */
export interface ClientInternals {
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
   * replies seen (RoundTrips); undefined before the first. The NestJS hold bounds its wait for a
   * release's reply with it.
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
