// Owns @LeaderElection and the leadership hooks: a method that runs only on the leader.
import { validateLockPath } from '../../core/paths';
import { copyMethodMetadata } from './distributed-lock.copy-metadata';
import { checkModuleAtBootstrap } from '../runtime/distributed-lock.bootstrap-check';
import {
  injectedLeaderElections,
  injectLeaderElections,
  leaderElectionsOf,
} from '../runtime/leader-election.injection';
import { recordElectionPath, recordLeadershipHook } from './leader-election.metadata';

type AnyMethod = (...args: any[]) => unknown;

/** An application without ZkLockModule fails its bootstrap naming the method (not each call). */
const ELECTIONS = {
  decorator: '@LeaderElection',
  injected: (instance: object) => !!injectedLeaderElections(instance),
};

/**
 * Runs the method only while this instance leads the election on `path`
 * (docs/recipes/leader-election.md); on every other instance a call is skipped and returns
 * undefined, as `onBusy: 'skip'` does. For `@Cron`, `@Interval` and queue handlers: every firing
 * runs on the leader, whatever the instances' clocks say. The application joins the election at
 * bootstrap and leaves it first at shutdown. The path is checked now (InvalidLockPathError).
 */
export function LeaderElection(path: string): MethodDecorator {
  validateLockPath(path);
  return (target, key, descriptor) => {
    const owner = typeof target === 'function' ? target : target.constructor;
    const where = `${owner.name}.${String(key)}`;
    const original = descriptor.value as AnyMethod | undefined;
    if (typeof original !== 'function') {
      throw new TypeError(`@LeaderElection('${path}') on ${where}: it decorates methods only`);
    }
    recordElectionPath(owner, path);
    injectLeaderElections(owner.prototype);
    checkModuleAtBootstrap(owner.prototype, where, owner.name, ELECTIONS);
    const wrapper = function (this: unknown, ...args: unknown[]): unknown {
      if (!leaderElectionsOf(this, where, owner.name).isLeader(path)) return undefined;
      return original.apply(this, args);
    };
    copyMethodMetadata(original, wrapper);
    descriptor.value = wrapper as typeof descriptor.value;
    return descriptor;
  };
}

/**
 * Calls the method with the Leadership (its `signal` aborts when leadership ends, its
 * `fencingToken` fences the leader's writes) when this instance becomes leader of `path`.
 */
export function OnLeadershipGranted(path: string): MethodDecorator {
  return leadershipHook('granted', path);
}

/**
 * Calls the method with `{ reason: 'stepped-down' | 'lost' | 'closed', error? }` when this
 * instance stops leading `path`: once after each grant, never on an instance that did not lead.
 */
export function OnLeadershipRevoked(path: string): MethodDecorator {
  return leadershipHook('revoked', path);
}

function leadershipHook(event: 'granted' | 'revoked', path: string): MethodDecorator {
  validateLockPath(path);
  return (target, _key, descriptor) => {
    const owner = typeof target === 'function' ? target : target.constructor;
    recordLeadershipHook(owner, descriptor.value as object, { event, path });
    injectLeaderElections(owner.prototype);
    return descriptor;
  };
}
