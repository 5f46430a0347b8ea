// The lock node: creating it (marked as ours), removing it when idle, re-creating it at the sequence limit.
import { CreateMode } from '../zookeeper/zk-client';
import type { Stat } from '../zookeeper/zk-client';
import { InvalidLockPathError, LockAccessDeniedError } from '../errors';
import { type Listing, ZkSession } from '../zookeeper/zk-session';
import { CONTAINER } from '../zookeeper/jute';
import { parentPath } from '../paths';
import {
  ZkCode,
  ZkRequestError,
  codeOf,
  isInDoubt,
  isNoNode,
  isNodeExists,
  isNotEmpty,
} from '../zookeeper/zk-errors';
import { sortContenders } from './lock-drivers';

/**
 * Data of every node this library creates as (part of) a lock path. Cleanup removes only such
 * nodes: a template value can name any node (`/app/{name}` with name=config), and a node someone
 * else created, or wrote data to since, is not ours to delete (docs/design.md "The mutex recipe", cleanup).
 */
export const LOCK_PATH_DATA = Buffer.from('nestjs-zookeeper-lock');

/**
 * One maxLeases per semaphore path (docs/design.md, "The lock family"). In this process: an
 * acquire with another limit than one under way fails before any request. Across processes: the
 * limit is recorded as the data of `<path>/leases`, which Curator's InterProcessSemaphoreV2
 * creates empty and never reads or writes (it only lists the children), so its participants are
 * not disturbed. The record binds only while leases exist: the acquirer holding `<path>/locks`
 * (the only one that creates leases) overwrites a record no other lease stands behind.
 */
const RECORD = /^nestjs-zookeeper-lock maxLeases=(\d+)$/;

export function limitRecord(maxLeases: number): Buffer {
  return Buffer.from(`nestjs-zookeeper-lock maxLeases=${maxLeases}`);
}

/** The limit a leases node records, if it holds our record. */
export function recordedLimit(data: Buffer | null): number | undefined {
  const match = data && RECORD.exec(data.toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/**
 * The ephemeralOwner ZooKeeper gives a CONTAINER node (EphemeralType.CONTAINER_EPHEMERAL_OWNER,
 * Long.MIN_VALUE), as ZkSession.ownerOf shows it.
 */
const CONTAINER_OWNER = '8000000000000000';

/**
 * A container (or persistent, as older releases made lock paths) node with our marker as its
 * data: created as a lock path, written by nobody since but a semaphore's acquirers (the leases
 * node records their maxLeases, see recipes/semaphore.ts).
 */
export function isOwnLockPath(data: Buffer | null, stat: Stat): boolean {
  const owner = ZkSession.ownerOf(stat);
  if ((owner !== '0' && owner !== CONTAINER_OWNER) || !data) return false;
  return data.equals(LOCK_PATH_DATA) || recordedLimit(data) !== undefined;
}

/**
 * @internal
 * Whether `path` is `namespace` or one of its ancestors: created persistent without the marker
 * and never removed (ensureLockPath, ParentReaper), whatever data it carries.
 */
export function isNamespace(path: string, namespace: string | undefined): boolean {
  return !!namespace && (namespace === path || namespace.startsWith(path + '/'));
}

/**
 * @internal
 * How a request in doubt is asked again: while `keepGoing()` (default: always), once
 * `usable(session)` resolved true (default: session.whenUsable()).
 */
export interface Recovery {
  keepGoing?: () => boolean;
  usable?: (session: ZkSession) => Promise<boolean>;
}

/** @internal `recovery` with its defaults filled in. */
export function withDefaults(recovery: Recovery): Required<Recovery> {
  const { keepGoing = () => true, usable = (s: ZkSession) => s.whenUsable() } = recovery;
  return { keepGoing, usable };
}

/**
 * Creates `path` (data `leafData`: the marker, or a semaphore's limit record) and its missing
 * ancestors as CONTAINER nodes with our marker, which the server and our cleanup remove once
 * empty. The namespace and its ancestors are persistent, with the configured ACL and no marker:
 * never removed, so nobody else can re-create them with another ACL. Deepest first, as Curator's
 * creatingParentContainersIfNeeded(): a path swept while its parent stayed costs one create;
 * only a missing parent (NO_NODE) sends it further up, then the missing ones are made top down.
 * A create whose answer is lost is sent again once the session is usable, while
 * `recovery.keepGoing()` (a path the server cannot read drops the connection every time: the
 * caller's wait ends it). An ancestor another client removes meanwhile is made again. Rejects
 * with SESSION_GONE when the session ends.
 */
export async function ensureLockPath(
  session: ZkSession,
  path: string,
  leafData: Buffer = LOCK_PATH_DATA,
  recovery: Recovery = {},
  attempts = 10,
): Promise<boolean> {
  const { keepGoing, usable } = withDefaults(recovery);
  /** Creates `p`: 'made' once it exists, NO_NODE's error when its parent is missing. */
  const create = async (p: string): Promise<'made' | 'gave-up' | { noParent: unknown }> => {
    const outsideLocks = isNamespace(p, session.namespace);
    const data = outsideLocks ? null : p === path ? leafData : LOCK_PATH_DATA;
    for (;;) {
      try {
        await session.create(p, data, outsideLocks ? CreateMode.PERSISTENT : CONTAINER);
        return 'made';
      } catch (err) {
        if (isInDoubt(err)) {
          if (!keepGoing()) return 'gave-up';
          if (await usable(session)) continue;
          throw new ZkRequestError(ZkCode.SESSION_GONE, 'create', p, 'session lost during create');
        }
        if (isNoNode(err)) return { noParent: err };
        if (!isNodeExists(err)) throw err;
        return 'made';
      }
    }
  };
  // Up from `path` to the first node that exists (made or found), then down again. The root
  // (a chroot's node) is never made here.
  const missing: string[] = [];
  for (let p = path; ; p = parentPath(p)) {
    const made = await create(p);
    if (made === 'gave-up') return false;
    if (made === 'made') break;
    if (parentPath(p) === '/') throw made.noParent;
    missing.push(p);
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    const made = await create(missing[i]);
    if (made === 'gave-up') return false;
    if (made === 'made') continue;
    // An ancestor made a moment ago is gone again (another client's cleanup): start over.
    if (attempts > 1) return ensureLockPath(session, path, leafData, recovery, attempts - 1);
    throw made.noParent;
  }
  return true;
}

/**
 * Removes an idle lock path node if it is ours (see isOwnLockPath) and has no children, with the
 * version just read, so a node changed meanwhile stays. 'kept': in use, or changed meanwhile;
 * 'foreign': not created as a lock path by this library; 'retry': connection trouble.
 */
export async function removeIdleLockPath(
  session: ZkSession,
  path: string,
): Promise<'gone' | 'kept' | 'foreign' | 'retry'> {
  try {
    const { data, stat } = await session.getData(path);
    if (!isOwnLockPath(data, stat)) return 'foreign';
    if (stat.numChildren > 0) return 'kept';
    await session.remove(path, stat.version);
    return 'gone';
  } catch (err) {
    if (isNoNode(err)) return 'gone';
    if (isNotEmpty(err) || codeOf(err) === ZkCode.BAD_VERSION) return 'kept'; // in use, or changed
    if (err instanceof LockAccessDeniedError) return 'foreign'; // its ACL refuses us: never retried
    return 'retry';
  }
}

/**
 * ZooKeeper's sequence suffix is the parent's signed 32-bit counter of child creates; past 2^31-1
 * ordering, the "one node ahead" shortcut and fencing tokens break. So nobody queues at or past
 * this guard: such a node is deleted at once, its waiters wait for the path to drain, then the
 * lock node is created anew (counter 0, a larger czxid: tokens keep growing). The 2^20 margin
 * covers the creates of waiters that arrive meanwhile (docs/design.md "The mutex recipe").
 */
export const SEQUENCE_GUARD = 2 ** 31 - 2 ** 20;

/** How often a waiter backed off at the guard looks whether the path has drained. */
const DRAIN_POLL_MS = 200;

/**
 * The sequence the lock node's next child gets. ZooKeeper numbers children by a stored counter
 * of creates, and its Stat shows cversion = 2 * counter - numChildren (a 32-bit int, so it
 * wraps long before the counter does).
 */
export function nextSequence(listing: Listing): number {
  return ((listing.cversion >>> 0) + listing.children.length) / 2; // 2^31 exactly reads as 0
}

/** Whether a node got a sequence at or past the guard (-1: one that did not parse, wrapped). */
export function pastSequenceGuard(sequence: number): boolean {
  return sequence < 0 || sequence >= SEQUENCE_GUARD;
}

/**
 * Waits until the lock node has drained and is re-created (by us or another process), or is
 * gone: then a create starts from a counter of 0. Stops once `wanted()` is false; tells `busy`
 * the nodes still queued below the guard (in lock order). Rejects with the session's error if it
 * is lost, and with InvalidLockPathError if the lock node was not created by this library as a
 * lock path (it is not ours to delete).
 */
export async function waitForSequenceReset(
  session: ZkSession,
  lockPath: string,
  wanted: () => boolean,
  busy: (children: string[]) => void,
): Promise<void> {
  while (wanted()) {
    const step = await resetStep(session, lockPath);
    if (step === 'done') return;
    if (step !== 'again') busy(step);
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
  }
}

async function resetStep(
  session: ZkSession,
  lockPath: string,
): Promise<'done' | 'again' | string[]> {
  let listing;
  try {
    listing = await session.getChildren(lockPath);
  } catch (err) {
    if (isNoNode(err)) return 'done'; // removed meanwhile: create it anew
    if (isInDoubt(err)) return 'again';
    throw err;
  }
  if (listing.children.length > 0) {
    if (nextSequence(listing) < SEQUENCE_GUARD) return 'done'; // re-created meanwhile
    return sortContenders(listing.children);
  }
  // Empty: delete it. (An empty node whose counter just wrapped shows the same Stat as a new
  // one, so an empty node is always deleted, at worst once more than needed.)
  const outcome = await removeIdleLockPath(session, lockPath);
  if (outcome === 'foreign') {
    throw new InvalidLockPathError(
      lockPath,
      `its sequence counter is near ZooKeeper's limit of 2^31 and this library did not create ` +
        'it as a lock path, so it will not delete and re-create it; delete it while nobody ' +
        'uses it, or lock another path',
    );
  }
  return outcome === 'gone' ? 'done' : 'again';
}
