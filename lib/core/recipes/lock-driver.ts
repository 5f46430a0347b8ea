import {
  LATCH_NAME,
  LOCK_NAME,
  READ_NAME,
  WRITE_NAME,
  positionOf,
  protectedPrefix,
  sequenceOf,
  sortContenders,
} from './lock-naming';

/** Where a node stands: `predecessor` is the node it must watch (null: it may hold now). */
export interface Position {
  predecessor: string | null;
  /**
   * Nodes ahead that keep it from holding: when the watched predecessor goes and this was 1, it
   * may hold without listing again (sequence numbers only grow: nothing can appear ahead).
   */
  ahead: number;
}

/**
 * What differs between the recipes that share the contender machinery (docs/design.md §7), as
 * Curator's LockInternalsDriver: the node name, and "may this node hold, and which node must it
 * watch". Everything else (create + list in one round trip, lost-reply recovery, guaranteed
 * delete, watches, loss, fencing) is the same for all of them.
 */
export interface LockDriver {
  readonly kind: 'mutex' | 'read' | 'write';
  /** `_c_<uuid>-<name>`: ZooKeeper appends the sequence. */
  nodeNamePrefix(uuid: string): string;
  /** The sequence ZooKeeper appended to one of our node names. */
  sequenceOf(name: string): number;
  /** Where `own` stands among `children`, ignoring `ignore` (our own released nodes); null if absent. */
  position(children: readonly string[], own: string, ignore: ReadonlySet<string>): Position | null;
}

/** Curator InterProcessMutex: `lock-`; the first of all children holds; watch the predecessor. */
export const mutexDriver: LockDriver = {
  kind: 'mutex',
  nodeNamePrefix: (uuid) => protectedPrefix(uuid) + LOCK_NAME,
  sequenceOf,
  position: positionOf,
};

const isWriter = (name: string): boolean => name.includes(WRITE_NAME);
/** Curator's read nodes, and kazoo's (`__rlock__`), which also wait only for writers. */
const isReader = (name: string): boolean => name.includes(READ_NAME) || name.includes('__rlock__');

/**
 * How many of `sorted` (children in lock order) hold now, by the drivers' rules: the readers
 * ahead of every other node, all holding together, or else the first node alone.
 */
export function holdingCount(sorted: readonly string[]): number {
  const firstOther = sorted.findIndex((name) => !isReader(name));
  if (firstOther < 0) return sorted.length;
  return firstOther === 0 ? 1 : firstOther;
}

/**
 * A writer holds when it is first of all children (readers and writers); it watches its
 * predecessor: the mutex's rule, under another name.
 */
export const writeDriver: LockDriver = {
  kind: 'write',
  nodeNamePrefix: (uuid) => protectedPrefix(uuid) + WRITE_NAME,
  sequenceOf,
  position: positionOf,
};

/**
 * A reader holds unless a writer is ahead of it; it watches the nearest writer ahead, and
 * `ahead` counts the writers ahead (so readers that queue behind a writer never starve it).
 */
export const readDriver: LockDriver = {
  kind: 'read',
  nodeNamePrefix: (uuid) => protectedPrefix(uuid) + READ_NAME,
  sequenceOf,
  position(children, own, ignore) {
    const sorted = sortContenders(children.filter((c) => c === own || !ignore.has(c)));
    const i = sorted.indexOf(own);
    if (i < 0) return null;
    const writersAhead = sorted.slice(0, i).filter(isWriter);
    return {
      predecessor: writersAhead.length === 0 ? null : writersAhead[writersAhead.length - 1],
      ahead: writersAhead.length,
    };
  },
};

/**
 * Curator LeaderLatch: `latch-` nodes; the first of all children leads; watch the predecessor.
 * Leadership is held like a mutex (docs/design.md "Leader election"); its kind only keys owner
 * scopes, which leadership never enters.
 */
export const latchDriver: LockDriver = {
  kind: 'mutex',
  nodeNamePrefix: (uuid) => protectedPrefix(uuid) + LATCH_NAME,
  sequenceOf,
  position: positionOf,
};
