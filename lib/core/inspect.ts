import type { LockInspection, LockNodeInfo } from './types';
import { sequenceOf, sortContenders } from './recipes/lock-naming';
import { ZkSession } from './zookeeper/zk-session';
import { isNoNode } from './zookeeper/zk-errors';

/** Reads who holds a lock and who waits, with the host/pid/app each node's data records. */
export async function inspectLock(
  session: ZkSession,
  path: string,
  fullPath: string,
): Promise<LockInspection> {
  let children: string[];
  try {
    children = (await session.getChildren(fullPath)).children;
  } catch (err) {
    if (isNoNode(err)) return { path, holder: null, queue: [] };
    throw err;
  }
  const nodes = await Promise.all(
    sortContenders(children).map(async (name): Promise<LockNodeInfo | null> => {
      try {
        const { data, stat } = await session.getData(`${fullPath}/${name}`);
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
  const live = nodes.filter((n): n is LockNodeInfo => n !== null);
  return { path, holder: live[0] ?? null, queue: live.slice(1) };
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
