// What a Contender does when its create fails: a missing lock path, a wrapped sequence, a lost reply.
import type { Listing, ZkSession } from '../zookeeper/zk-session';
import { isInDoubt, isNoNode, isNodeExists } from '../zookeeper/zk-errors';
import { deleteWithRetry } from './guaranteed-delete';
import { ensureLockPath } from './lock-path';
import { DOUBTS_AFTER_WAIT, type ProtectedNode } from './protected-node';
import { waitForSequenceReset } from './sequence-wrap';
import type { Place } from './grant-policy';

/** What Contender.enter() does after one create: create again (after a reply in doubt), or nothing. */
export type Next = 'create' | 'create-after-doubt' | 'done';

/** @internal What CreateFailures asks of its Contender. */
export interface Creating {
  /** Full path of the lock node (namespace applied). */
  readonly lockPath: string;
  /** Our node: its name, recovery and delete. */
  readonly node: ProtectedNode;
  /** Its caller gave up, or its session went. */
  isGone(): boolean;
  /** Takes `name` as our node, queued. */
  adopt(name: string): void;
  /** Learns our place from a listing. */
  apply(listing: Listing): void;
  remove(): Promise<void>;
  /** Back to creating: our node was deleted at the sequence guard, to be created anew. */
  restart(): void;
  /** While creating: who is still queued as the path drains (undefined: no longer known). */
  busy(place?: Place): void;
  /** A create went unanswered: finding out is a wait, which its callers' deadlines may end. */
  inDoubt(): void;
}

/**
 * @internal
 * The failures of a contender's create, each answered with what enter() does next: the lock path
 * is missing (create it), the sequence counter wrapped (wait for the path to be re-created:
 * sequence-wrap.ts), or the reply was lost (find our node by its uuid: ProtectedNode.recover).
 */
export class CreateFailures {
  /** Answers in doubt since nobody waits for this node any more (see keepRecovering). */
  private doubtsAfterWait = 0;

  constructor(private readonly contender: Creating) {}

  async after(session: ZkSession, err: unknown): Promise<Next> {
    if (isNoNode(err)) return (await this.createLockPath(session)) ? 'create' : 'done';
    // Once the counter sticks at 2^31-1 (ZooKeeper 3.8), a create can clash with a node of
    // that name: the path must be re-created (sequence-wrap.ts).
    if (isNodeExists(err)) return (await this.waitForSequenceReset(session)) ? 'create' : 'done';
    if (!isInDoubt(err)) throw err;
    // Asked first: a doubt that came while a caller still waited is not one "after the wait".
    const keepGoing = this.keepRecovering();
    this.contender.inDoubt();
    if (!keepGoing || (await this.recover(session))) return 'done';
    return 'create-after-doubt';
  }

  /**
   * The create's reply was lost: find our node (ProtectedNode.recover) and take our place, or
   * delete it if nobody waits for it. True when done (adopted, or given up: see keepRecovering),
   * false to create again.
   */
  async recover(session: ZkSession): Promise<boolean> {
    const { contender } = this;
    const found = await contender.node.recover(session, {
      keepGoing: () => this.keepRecovering(),
    });
    if (found === 'not-found') return false;
    if (found === 'gave-up') return true;
    contender.adopt(contender.node.name!);
    if (contender.isGone()) await contender.remove();
    else contender.apply(found);
    return true;
  }

  /**
   * Our node got a sequence near 2^31: delete it, wait until the path has drained and is
   * re-created (sequence-wrap.ts), then create again. False when the waiter gave up meanwhile.
   */
  async leaveForSequenceReset(session: ZkSession): Promise<boolean> {
    const { contender } = this;
    await deleteWithRetry(session, contender.node.path);
    if (contender.isGone()) return false;
    contender.restart();
    return this.waitForSequenceReset(session);
  }

  /** The lock path is missing: create it; false if the caller's wait ended meanwhile. */
  private async createLockPath(session: ZkSession): Promise<boolean> {
    const gone = () => this.contender.isGone();
    if (gone()) return false; // the leader had no lock path: no node of ours either
    return ensureLockPath(session, this.contender.lockPath, undefined, {
      keepGoing: () => {
        this.contender.inDoubt(); // asked on each create in doubt (lock-path.ts)
        return !gone();
      },
    });
  }

  /**
   * Whether recovery of a create in doubt goes on after one more answer in doubt. Always while
   * a caller waits for this node; once nobody does, DOUBTS_AFTER_WAIT more (protected-node.ts
   * says why). A node it could not find then (if the server created one at all) is ours: it goes
   * with the session at the latest (docs/design.md "The mutex recipe").
   */
  private keepRecovering(): boolean {
    return !this.contender.isGone() || ++this.doubtsAfterWait <= DOUBTS_AFTER_WAIT;
  }

  private async waitForSequenceReset(session: ZkSession): Promise<boolean> {
    const { contender } = this;
    await waitForSequenceReset(session, contender.lockPath, {
      wanted: () => !contender.isGone(),
      // Not queued, but busy: a try gives up, a waiter's timeout counts who is ahead.
      busy: (children) =>
        contender.busy({ predecessor: children[children.length - 1], ahead: children.length }),
    });
    contender.busy();
    return !contender.isGone();
  }
}
