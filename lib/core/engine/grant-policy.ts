// The grant policies: what differs between the recipes that queue nodes on a lock path.
import {
  LATCH_NAME,
  LOCK_NAME,
  READ_NAME,
  WRITE_NAME,
  positionOf,
  sortContenders,
} from './lock-naming';
import type { Contender } from './contender';
import type { Waiter } from './waiter';

/** @internal The recipes a WaiterQueue serves (owner scopes keep their holds apart). */
export type LockKind = 'mutex' | 'read' | 'write';

/** @internal Where a node stands: `predecessor` is the node it must watch (null: it may hold now). */
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
 * What one recipe decides, as Curator's LockInternalsDriver (docs/design.md "The lock family"):
 * its node name, and "given the children, may this node hold, and which node must it watch".
 * The WaiterQueue and its Contenders do the rest, the same for every recipe: create + list in one
 * round trip, lost-reply recovery, guaranteed delete, watches, batching, loss and fencing.
 * A new recipe on a lock path is a policy and a node name (lock-naming.ts's sequence markers).
 */
export interface GrantPolicy {
  readonly kind: LockKind;
  /** The node name after the protected prefix `_c_<uuid>-`; ZooKeeper appends the sequence. */
  readonly nodeName: string;
  /**
   * Whether the callers waiting on one node all hold at once (readers), or one after another,
   * each with its own fencing token, handed on in process (a mutex, a writer: exclusive).
   */
  readonly shared: boolean;
  /** Where `own` stands among `children`, ignoring `ignore` (our own released nodes); null if absent. */
  place(children: readonly string[], own: string, ignore: ReadonlySet<string>): Place | null;
}

/** Curator InterProcessMutex: `lock-`; the first of all children holds; watch the predecessor. */
export const mutexPolicy: GrantPolicy = {
  kind: 'mutex',
  nodeName: LOCK_NAME,
  shared: false,
  place: positionOf,
};

/**
 * A writer holds when it is first of all children (readers and writers); it watches its
 * predecessor: the mutex's rule, under another name.
 */
export const writePolicy: GrantPolicy = {
  kind: 'write',
  nodeName: WRITE_NAME,
  shared: false,
  place: positionOf,
};

const isWriter = (name: string): boolean => name.includes(WRITE_NAME);
/** Curator's read nodes, and kazoo's (`__rlock__`), which also wait only for writers. */
const isReader = (name: string): boolean => name.includes(READ_NAME) || name.includes('__rlock__');

/**
 * A reader holds unless a writer is ahead of it; it watches the nearest writer ahead, and
 * `ahead` counts the writers ahead (so readers that queue behind a writer never starve it).
 */
export const readPolicy: GrantPolicy = {
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

/**
 * @internal
 * Curator LeaderLatch: `latch-` nodes; the first of all children leads; watch the predecessor.
 * Leadership is held like a mutex (docs/design.md "Leader election"); its kind only keys owner
 * scopes, which leadership never enters.
 */
export const latchPolicy: GrantPolicy = {
  kind: 'mutex',
  nodeName: LATCH_NAME,
  shared: false,
  place: positionOf,
};

/** @internal The policy of each lock kind. */
export const POLICIES: Readonly<Record<LockKind, GrantPolicy>> = {
  mutex: mutexPolicy,
  read: readPolicy,
  write: writePolicy,
};

/**
 * @internal
 * How many of `sorted` (children in lock order) hold now, by the policies' rules: the readers
 * ahead of every other node, all holding together, or else the first node alone (inspect()).
 */
export function holdingCount(sorted: readonly string[]): number {
  const firstOther = sorted.findIndex((name) => !isReader(name));
  if (firstOther < 0) return sorted.length;
  return firstOther === 0 ? 1 : firstOther;
}

/** @internal What a queue may do now: hand `node` to `members`, or first `confirm` it still exists. */
export interface Grant {
  readonly node: Contender;
  readonly members: readonly Waiter[];
  readonly confirm: boolean;
}

/**
 * @internal
 * Who of a queue's `waiters` may hold now (`busy`: a node of ours holds, or is being confirmed).
 * Shared (readers): every node its policy lets hold, for all the callers that wait on it.
 * Exclusive: the first caller whose node may hold, once nothing of ours holds; the next caller
 * of a batch only once the server said the node still exists since the last reconnect, or a
 * remote that took the lock after a deletion would hold too.
 */
export function grantsNow(policy: GrantPolicy, waiters: readonly Waiter[], busy: boolean): Grant[] {
  if (policy.shared) {
    const nodes = new Set(waiters.map((w) => w.contender));
    return [...nodes].filter(mayGrant).map((node) => ({
      node,
      members: waiters.filter((w) => w.contender === node),
      confirm: false,
    }));
  }
  if (busy) return [];
  const first = waiters.find((w) => w.contender?.isFirst);
  const node = first?.contender;
  if (!mayGrant(node)) return [];
  return [{ node, members: [first!], confirm: node.isHeld && !node.confirmed }];
}

/**
 * Granted only on a connected session heard from within the safe window: while disconnected
 * ownership is unknown, a node of a lost session is gone (its callers queue anew), and a process
 * that just woke from a pause may hold a session the server expired (docs/design.md "What
 * holding means, and when it ends").
 */
function mayGrant(node: Contender | undefined): node is Contender {
  return !!node?.isFirst && !!node.session?.checkProvenAlive();
}
