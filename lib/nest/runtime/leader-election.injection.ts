// Owns how a @LeaderElection method reaches its LeaderElectionService: an injected property.
import { ZkLockError } from '../../core/errors';
import { injectedProperty, injectProperty, lockServiceHint } from './distributed-lock.wrapper';
import { LeaderElectionService } from './leader-election.service';

/** Where Nest puts the LeaderElectionService of a class with `@LeaderElection` methods. */
const LEADER_ELECTIONS = Symbol('zk-lock:leader-elections');

/**
 * Nest injects, into every instance of a class with `@LeaderElection` methods, the
 * LeaderElectionService its module sees (as distributed-lock.wrapper.ts does for LockService), so
 * several applications in one process each ask their own elections.
 */
export function injectLeaderElections(prototype: object): void {
  injectProperty(prototype, LEADER_ELECTIONS, LeaderElectionService);
}

/** The LeaderElectionService Nest injected into `instance`, if any. */
export function injectedLeaderElections(instance: unknown): LeaderElectionService | undefined {
  return injectedProperty(instance, LEADER_ELECTIONS, LeaderElectionService);
}

/** The LeaderElectionService of the instance a decorated method was called on, or a clear error. */
export function leaderElectionsOf(
  instance: unknown,
  where: string,
  owner: string,
): LeaderElectionService {
  const service = injectedLeaderElections(instance);
  if (service) return service;
  throw new ZkLockError(
    `@LeaderElection on ${where} was called on an instance Nest gave no LeaderElectionService. ` +
      lockServiceHint(owner),
  );
}
