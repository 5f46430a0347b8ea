// The participants of an election in line order, with the ids their nodes record.
import type { ZkSession } from '../zookeeper/zk-session';
import { isNoNode } from '../zookeeper/zk-errors';
import type { Participant } from './election-types';
import { sortContenders } from '../engine/lock-drivers';

/**
 * The participants of the election at `lockPath` in line order, with the ids their nodes' data
 * records (Curator LeaderLatch's getParticipants(): every child counts, the first leads). A node
 * that goes while it is read is left out; a path that does not exist has none.
 */
export async function readParticipants(
  session: ZkSession,
  lockPath: string,
): Promise<Participant[]> {
  const children = await session.getChildren(lockPath).then(
    (listing) => listing.children,
    (err) => (isNoNode(err) ? [] : Promise.reject(err)),
  );
  const ids = await Promise.all(
    sortContenders(children).map((name) =>
      session.getData(`${lockPath}/${name}`).then(
        ({ data }) => data?.toString('utf8') ?? '',
        (err) => (isNoNode(err) ? undefined : Promise.reject(err)),
      ),
    ),
  );
  return ids
    .filter((id): id is string => id !== undefined)
    .map((id, i) => ({ id, isLeader: i === 0 }));
}
