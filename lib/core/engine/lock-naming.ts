// Node names and ordering: protected names, sequences, sort order, fencing tokens.
/**
 * Naming and ordering rules, compatible with Curator's InterProcessMutex
 * (StandardLockInternalsDriver): protected names `_c_<uuid>-lock-<seq>`, ordered by the
 * sequence ZooKeeper appended; every child is a contender (a name with no sequence sorts by the
 * whole name, as in Curator).
 */
export const LOCK_NAME = 'lock-';
/** Curator InterProcessReadWriteLock's node names. */
export const READ_NAME = '__READ__';
export const WRITE_NAME = '__WRIT__';
/** Curator InterProcessSemaphoreV2's lease nodes. */
export const LEASE_NAME = 'lease-';
/** Curator LeaderLatch's participant nodes (docs/design.md "Leader election"). */
export const LATCH_NAME = 'latch-';

/** Prefix of every node one acquisition attempt creates; the uuid finds it again after a lost reply. */
export function protectedPrefix(uuid: string): string {
  return `_c_${uuid}-`;
}

/** kazoo's lock and read-lock node names end in `__lock__<seq>` / `__rlock__<seq>`. */
const KAZOO_NAME = /__r?lock__(\d{10})$/;
/** What precedes the sequence in every style of ours and Curator's (the last one in the name counts). */
const SEQUENCE_MARKERS = [LOCK_NAME, READ_NAME, WRITE_NAME, LEASE_NAME, LATCH_NAME];

/** The digits ZooKeeper appends to a sequential node's name (`%010d`). */
const SEQUENCE_LENGTH = 10;
/** What precedes those digits in every node style of ours, Curator's and kazoo's. */
const APPENDED_AFTER = [...SEQUENCE_MARKERS, '__lock__', '__rlock__'];

/**
 * The digits of a name that ends in a marker of any style and ZooKeeper's 10 digits: every
 * node of ours, Curator's and kazoo's. No marker can end inside those digits (each ends in "-"
 * or "_"), so the marker right before them is the last one, and the general rule of sortKey
 * gives the same digits; this only skips its searches, on every listing. Undefined otherwise.
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
 * What a child sorts by: its sequence, the digits after the last marker of any node style (the
 * mutex's "lock-", the read/write lock's `__READ__`/`__WRIT__`, a semaphore's "lease-", a leader
 * latch's "latch-", kazoo's
 * `__lock__`/`__rlock__`), so every peer's node takes its place by sequence, whatever its uuid;
 * any other name sorts by the whole name, as in Curator. ZooKeeper numbers all children of one
 * parent from one counter, so this is the order they were created in.
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

/** Local handoffs of one node (see WaiterQueue and Contender) are numbered in the token's low 32 bits. */
export const MAX_GENERATION = 0xffff_ffff;

/**
 * Fencing token = (czxid of the lock node << 64) | (sequence << 32) | generation, below 2^128.
 * Within one incarnation of the lock node the sequence grows; a re-created lock node has a larger
 * czxid (zxids only grow), so tokens grow strictly from each holder's node to the next, also
 * across removal of the lock node. The generation numbers the callers one process serves on one
 * node in turn (0 for the first). Needs no extra request: GET_CHILDREN2 returns the lock node's
 * Stat with the listing. A zxid carries the leader epoch in its high 32 bits, so tokens do not
 * fit 64 bits: store them as NUMERIC(39) or as `fencingTokenText()`.
 */
export function fencingToken(lockNodeCzxid: bigint, sequence: number, generation = 0): bigint {
  if (generation < 0 || generation > MAX_GENERATION) {
    throw new RangeError(`fencing generation ${generation} is outside 0..${MAX_GENERATION}`);
  }
  return (lockNodeCzxid << 64n) | (BigInt(sequence >>> 0) << 32n) | BigInt(generation);
}

/** A token as 39 zero-padded digits: text order equals numeric order (for TEXT columns). */
export function fencingTokenText(token: bigint): string {
  return token.toString().padStart(39, '0');
}

/** Where `own` stands among `children`, ignoring `ignore` (our own released holder nodes). */
export function positionOf(
  children: readonly string[],
  own: string,
  ignore: ReadonlySet<string>,
): { predecessor: string | null; ahead: number } | null {
  const sorted = sortContenders(children.filter((c) => c === own || !ignore.has(c)));
  const i = sorted.indexOf(own);
  if (i < 0) return null;
  return { predecessor: i === 0 ? null : sorted[i - 1], ahead: i };
}
