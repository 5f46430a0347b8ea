// Owns the keys of what the leader-election decorators record, and their accessors.
/** Metadata on a class with `@LeaderElection` methods or leadership hooks: the election paths. */
export const LEADER_ELECTION_CLASS_METADATA = 'zk-lock:leader-election-class';
/** Metadata on a hook method: `{ event, path }[]` (one method may hook several elections). */
export const LEADERSHIP_HOOK_METADATA = 'zk-lock:leadership-hook';

export type LeadershipHookEvent = 'granted' | 'revoked';

export interface LeadershipHook {
  readonly event: LeadershipHookEvent;
  readonly path: string;
}

/**
 * The one accessor of what the election decorators record: on each class, the paths its methods
 * take part in (the explorer joins them at bootstrap); on each hook method, its hooks.
 */
export function recordElectionPath(owner: object, path: string): void {
  const paths = electionPathsOf(owner);
  if (!paths.includes(path)) {
    Reflect.defineMetadata(LEADER_ELECTION_CLASS_METADATA, [...paths, path], owner);
  }
}

export function recordLeadershipHook(owner: object, method: object, hook: LeadershipHook): void {
  recordElectionPath(owner, hook.path);
  Reflect.defineMetadata(LEADERSHIP_HOOK_METADATA, [...hooksOf(method), hook], method);
}

/** The election paths of a class (and its ancestors, through Reflect's prototype chain). */
export function electionPathsOf(owner: object): readonly string[] {
  return (Reflect.getMetadata(LEADER_ELECTION_CLASS_METADATA, owner) as string[]) ?? [];
}

export function hooksOf(method: unknown): readonly LeadershipHook[] {
  if (typeof method !== 'function') return [];
  return (Reflect.getOwnMetadata(LEADERSHIP_HOOK_METADATA, method) as LeadershipHook[]) ?? [];
}
