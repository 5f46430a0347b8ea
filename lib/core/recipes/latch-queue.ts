// The queue of one election participant: a WaiterQueue with Curator LeaderLatch's policy.
import type { Contender } from '../engine/contender';
import { LATCH_DRIVER } from '../engine/lock-drivers';
import type { HeldLock } from '../engine/held-lock';
import { WaiterQueue } from '../engine/waiter-queue';
import type { ZkConnection } from '../zookeeper/zk-connection';

/**
 * @internal
 * The queue of one participant of an election (docs/design.md "Leader election"): a WaiterQueue
 * with the latch policy and the participant id as node data, one node at a time, always watched
 * for deletion (a leader must hear of it). It also says when our node has taken its place in line
 * (the election's start() resolves then).
 */
export function latchQueue(
  connection: ZkConnection,
  lockPath: string,
  path: string,
  participantId: string,
  onJoined: (node: Contender) => void,
  onLost: (lock: HeldLock) => void,
): WaiterQueue {
  const context = {
    connection,
    nodeData: Buffer.from(participantId, 'utf8'),
    maxNodesPerPath: 1,
    watchesLoss: () => true,
    released: () => undefined,
    lost: onLost,
    placed: (node: Contender) => {
      if (node.name && node.predecessor !== undefined && !node.isGone) onJoined(node);
    },
  };
  return new WaiterQueue(context, () => undefined, lockPath, path, LATCH_DRIVER);
}
