import type { HeldLock } from '../held-lock';
import type { ZkConnection } from '../zookeeper/zk-connection';
import type { Contender } from './contender';
import { latchDriver } from './lock-driver';
import { LockQueue } from './lock-queue';

/**
 * The queue of one participant of an election (docs/design.md "Leader election"): the mutex's
 * queue with Curator LeaderLatch's node names and the participant id as node data, one node at a
 * time, always watched for deletion (a leader must hear of it). It also says when our node has
 * taken its place in line (the election's start() resolves then).
 */
export class LatchQueue extends LockQueue {
  constructor(
    connection: ZkConnection,
    lockPath: string,
    path: string,
    participantId: string,
    private readonly onJoined: (node: Contender) => void,
    onLost: (lock: HeldLock) => void,
  ) {
    const host = {
      connection,
      nodeData: Buffer.from(participantId, 'utf8'),
      maxNodesPerPath: 1,
      watchesLoss: true,
      onIdle: () => undefined,
      onLost,
      onReleased: () => undefined,
    };
    super(host, lockPath, path, latchDriver);
  }

  /** Our node was listed (created, or found again): its place in line is known. */
  override onPosition(node?: Contender): void {
    super.onPosition();
    if (node?.name && node.predecessor !== undefined && !node.abandoned) this.onJoined(node);
  }
}
