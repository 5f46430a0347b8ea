// inspect(): who holds and who waits on a lock path or a semaphore, read from ZooKeeper.
import type { LockInspection, LockNodeInfo, SemaphoreInspection } from '../types';
import { holdingCount } from '../engine/lock-drivers';
import { sequenceOf, sortContenders } from '../engine/lock-drivers';
import { ZkSession } from '../zookeeper/zk-session';
import { isNoNode } from '../zookeeper/zk-errors';

/**
 * Reads who holds a lock and who waits, with each node's recorded data, in sequence order, the
 * holders by the drivers' rules (docs/design.md, "The lock family").
 */
export async function inspectLock(
  session: ZkSession,
  path: string,
  fullPath: string,
): Promise<LockInspection> {
  const nodes = await readNodes(session, fullPath);
  const held = holdingCount(nodes.map((n) => n.name));
  return {
    path,
    holder: nodes[0] ?? null,
    holders: nodes.slice(0, held),
    queue: nodes.slice(held),
  };
}

/**
 * A semaphore's leases in sequence order: the first `maxLeases` are counted as held, the rest
 * wait (only the acquirer holding `<path>/locks` waits, and its nodes are the newest).
 */
export async function inspectSemaphore(
  session: ZkSession,
  path: string,
  leasesPath: string,
  maxLeases: number,
): Promise<SemaphoreInspection> {
  const nodes = await readNodes(session, leasesPath);
  return { path, maxLeases, holders: nodes.slice(0, maxLeases), waiting: nodes.slice(maxLeases) };
}

/** The children of `dir` in lock order with their owners and data; [] when `dir` is gone. */
async function readNodes(session: ZkSession, dir: string): Promise<LockNodeInfo[]> {
  let children: string[];
  try {
    children = (await session.getChildren(dir)).children;
  } catch (err) {
    if (isNoNode(err)) return [];
    throw err;
  }
  const nodes = await Promise.all(
    sortContenders(children).map(async (name): Promise<LockNodeInfo | null> => {
      try {
        const { data, stat } = await session.getData(`${dir}/${name}`);
        return {
          name,
          sequence: sequenceOf(name),
          sessionId: ZkSession.ownerOf(stat),
          data: parseData(data),
        };
      } catch (err) {
        if (isNoNode(err)) return null; // released while we looked
        throw err;
      }
    }),
  );
  return nodes.filter((n): n is LockNodeInfo => n !== null);
}

function parseData(data: Buffer | null): Record<string, unknown> {
  if (!data || data.length === 0) return {};
  try {
    const parsed = JSON.parse(data.toString('utf8'));
    return parsed && typeof parsed === 'object' ? parsed : { raw: String(parsed) };
  } catch {
    return { raw: data.toString('utf8') }; // e.g. Curator writes the client's IP address
  }
}
