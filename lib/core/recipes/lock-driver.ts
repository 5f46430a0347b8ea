import { LOCK_NAME, positionOf, protectedPrefix, sequenceOf } from './lock-naming';

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

/** Curator InterProcessReadWriteLock's node names. */
export const READ_NAME = '__READ__';
export const WRITE_NAME = '__WRIT__';

/** The sequence part of a read/write node name (after the last marker), for ordering. */
function rwSortKey(name: string): string {
  const i = Math.max(name.lastIndexOf(READ_NAME), name.lastIndexOf(WRITE_NAME));
  return i >= 0 ? name.slice(i + READ_NAME.length) : name;
}

/** The read/write nodes in sequence order (without `ignore`, except `own`), and `own`'s index. */
function locate(
  children: readonly string[],
  own: string,
  ignore: ReadonlySet<string>,
): [string[], number] {
  const sorted = children
    .filter((c) => c === own || !ignore.has(c))
    .map((name) => ({ name, key: rwSortKey(name) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((c) => c.name);
  return [sorted, sorted.indexOf(own)];
}

const isWriter = (name: string): boolean => name.includes(WRITE_NAME);

function rwSequenceOf(name: string): number {
  const digits = rwSortKey(name);
  return /^\d+$/.test(digits) ? Number(digits) : -1;
}

/** A writer holds when it is first of all children (readers and writers); it watches its predecessor. */
export const writeDriver: LockDriver = {
  kind: 'write',
  nodeNamePrefix: (uuid) => protectedPrefix(uuid) + WRITE_NAME,
  sequenceOf: rwSequenceOf,
  position(children, own, ignore) {
    const [sorted, i] = locate(children, own, ignore);
    if (i < 0) return null;
    return { predecessor: i === 0 ? null : sorted[i - 1], ahead: i };
  },
};

/**
 * A reader holds unless a writer is ahead of it; it watches the nearest writer ahead, and
 * `ahead` counts the writers ahead (so readers that queue behind a writer never starve it).
 */
export const readDriver: LockDriver = {
  kind: 'read',
  nodeNamePrefix: (uuid) => protectedPrefix(uuid) + READ_NAME,
  sequenceOf: rwSequenceOf,
  position(children, own, ignore) {
    const [sorted, i] = locate(children, own, ignore);
    if (i < 0) return null;
    const writersAhead = sorted.slice(0, i).filter(isWriter);
    return {
      predecessor: writersAhead.length === 0 ? null : writersAhead[writersAhead.length - 1],
      ahead: writersAhead.length,
    };
  },
};
