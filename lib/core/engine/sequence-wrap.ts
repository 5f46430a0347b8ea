// The sequence limit: no node queues near 2^31; the lock node is re-created instead.
import { InvalidLockPathError } from '../errors';
import type { Listing, ZkSession } from '../zookeeper/zk-session';
import { isInDoubt, isNoNode } from '../zookeeper/zk-errors';
import { sortContenders } from './lock-naming';
import { removeIdleLockPath } from './lock-path';

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

export interface ResetWait {
  /** False once the waiter has given up: stop waiting. */
  wanted(): boolean;
  /** Nodes still queued below the guard (in lock order): the path is busy. */
  busy(children: string[]): void;
}

/**
 * Waits until the lock node has drained and is re-created (by us or another process), or is
 * gone: then a create starts from a counter of 0. Rejects with the session's error if it is lost,
 * and with InvalidLockPathError if the lock node was not created by this library as a lock path
 * (it is not ours to delete).
 */
export async function waitForSequenceReset(
  session: ZkSession,
  lockPath: string,
  wait: ResetWait,
): Promise<void> {
  while (wait.wanted()) {
    const step = await resetStep(session, lockPath);
    if (step === 'done') return;
    if (step !== 'again') wait.busy(step);
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
