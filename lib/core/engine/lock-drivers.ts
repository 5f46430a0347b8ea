// The drivers per recipe (Curator's LockInternalsDriver): node names, their order, who may hold.
/** Curator InterProcessMutex's node name: `_c_<uuid>-lock-<seq>` with its protection. */
export const LOCK_NAME = 'lock-';
/** Curator InterProcessReadWriteLock's node names. */
export const READ_NAME = '__READ__';
export const WRITE_NAME = '__WRIT__';
/** Curator InterProcessSemaphoreV2's lease nodes. */
export const LEASE_NAME = 'lease-';
/** Curator LeaderLatch's participant nodes (docs/design.md "Leader election"). */
export const LATCH_NAME = 'latch-';

/** kazoo's lock and read-lock node names end in `__lock__<seq>` / `__rlock__<seq>`. */
const KAZOO_NAME = /__r?lock__(\d{10})$/;
/** What precedes the sequence in our and Curator's styles (the last one in the name counts). */
const SEQUENCE_MARKERS = [LOCK_NAME, READ_NAME, WRITE_NAME, LEASE_NAME, LATCH_NAME];
/** The digits ZooKeeper appends to a sequential node's name (`%010d`). */
const SEQUENCE_LENGTH = 10;
/** What precedes those digits in every node style of ours, Curator's and kazoo's. */
const APPENDED_AFTER = [...SEQUENCE_MARKERS, '__lock__', '__rlock__'];

/**
 * The digits of a name ending in a marker of any style and 10 digits (every node of ours, Curator's
 * and kazoo's): no marker ends inside them, so this equals sortKey's general rule, without search.
 */
function appendedSequence(name: string): string | undefined {
  const start = name.length - SEQUENCE_LENGTH;
  if (start <= 0) return undefined;
  for (let i = start; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 48 || c > 57) return undefined; // not 0-9
  }
  for (const marker of APPENDED_AFTER) if (name.endsWith(marker, start)) return name.slice(start);
  return undefined;
}

/**
 * What a child sorts by: the digits after the last marker of any style, so every peer's node sorts
 * by sequence (one counter per parent: creation order) whatever its uuid; any other name by the
 * whole name, as in Curator.
 */
export function sortKey(name: string): string {
  return appendedSequence(name) ?? anyNameKey(name);
}

/** sortKey's general rule, for a name that does not end in a marker and 10 digits. */
function anyNameKey(name: string): string {
  const kazoo = KAZOO_NAME.exec(name);
  if (kazoo) return kazoo[1];
  let end = -1;
  for (const marker of SEQUENCE_MARKERS) {
    const i = name.lastIndexOf(marker);
    if (i >= 0) end = Math.max(end, i + marker.length);
  }
  return end >= 0 ? name.slice(end) : name;
}

/** The sequence ZooKeeper appended, or -1 for a node that has none. */
export function sequenceOf(name: string): number {
  const appended = appendedSequence(name);
  if (appended !== undefined) return Number(appended);
  const digits = anyNameKey(name);
  return /^\d+$/.test(digits) ? Number(digits) : -1;
}

/** Contenders in lock order (first = holder). */
export function sortContenders(children: readonly string[]): string[] {
  return children
    .map((name) => ({ name, key: sortKey(name) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((c) => c.name);
}

/** @internal The recipes that queue on a lock path (owner scopes keep their holds apart). */
export type LockKind = 'mutex' | 'read' | 'write';

/** @internal Where a node stands: `predecessor` is the node to watch (null: it may hold now). */
export interface Place {
  predecessor: string | null;
  /**
   * Nodes ahead that keep it from holding: when the watched predecessor goes and this was 1, it
   * may hold without listing again (sequence numbers only grow: nothing can appear ahead).
   */
  ahead: number;
}

/**
 * @internal
 * One recipe's rules, as Curator's LockInternalsDriver: its node name and, given the children,
 * "may this node hold, and which node must it watch" (docs/design.md "The lock family").
 */
export interface LockDriver {
  readonly kind: LockKind;
  /** The node name after the protected prefix `_c_<uuid>-`; ZooKeeper appends the sequence. */
  readonly nodeName: string;
  /**
   * Whether the callers waiting on one node all hold at once (readers), or one after another,
   * each with its own fencing token (a mutex, a writer: exclusive).
   */
  readonly shared: boolean;
  /** Where `own` stands among `children`, ignoring `ignore` (our released nodes); null: absent. */
  place(children: readonly string[], own: string, ignore: ReadonlySet<string>): Place | null;
}

/** @internal The first of all children holds; each node watches the one right before it. */
export function positionOf(
  children: readonly string[],
  own: string,
  ignore: ReadonlySet<string>,
): Place | null {
  const sorted = sortContenders(children.filter((c) => c === own || !ignore.has(c)));
  const i = sorted.indexOf(own);
  if (i < 0) return null;
  return { predecessor: i === 0 ? null : sorted[i - 1], ahead: i };
}

const isWriter = (name: string): boolean => name.includes(WRITE_NAME);
/** Curator's read nodes, and kazoo's (`__rlock__`), which also wait only for writers. */
const isReader = (name: string): boolean => name.includes(READ_NAME) || name.includes('__rlock__');

/** Curator InterProcessMutex. */
const mutex: LockDriver = { kind: 'mutex', nodeName: LOCK_NAME, shared: false, place: positionOf };

/** A writer holds when first of all children, readers and writers: the mutex's rule. */
const write: LockDriver = { kind: 'write', nodeName: WRITE_NAME, shared: false, place: positionOf };

/**
 * A reader holds unless a writer is ahead of it; it watches the nearest writer ahead, and `ahead`
 * counts the writers ahead (readers that queue behind a writer never starve it).
 */
const read: LockDriver = {
  kind: 'read',
  nodeName: READ_NAME,
  shared: true,
  place(children, own, ignore) {
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

/** @internal The driver of each lock kind. */
export const DRIVERS: Readonly<Record<LockKind, LockDriver>> = { mutex, read, write };

/**
 * @internal
 * Curator LeaderLatch: the first `latch-` node leads, each watches the one before; held like a
 * mutex (docs/design.md "Leader election").
 */
export const LATCH_DRIVER: LockDriver = { ...mutex, nodeName: LATCH_NAME };

/**
 * @internal
 * How many of `sorted` (children in lock order) hold now, by the drivers' rules: the readers
 * ahead of every other node, all holding together, or else the first node alone (inspect()).
 */
export function holdingCount(sorted: readonly string[]): number {
  const firstOther = sorted.findIndex((name) => !isReader(name));
  if (firstOther < 0) return sorted.length;
  return firstOther === 0 ? 1 : firstOther;
}
