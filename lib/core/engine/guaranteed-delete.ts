// Deleting one of our nodes, retried through connection loss (the guaranteed delete).
import type { ZkSession } from '../zookeeper/zk-session';
import { isInDoubt, isNoNode, isSessionGone } from '../zookeeper/zk-errors';

/**
 * Deletes `path`, retrying through connection loss until done or the session is gone: an
 * orphan node would block every later caller until the session ends (docs/design.md "The mutex recipe", release).
 */
export async function deleteWithRetry(session: ZkSession, path: string): Promise<void> {
  for (;;) {
    try {
      await session.remove(path);
      return;
    } catch (err) {
      if (isNoNode(err) || isSessionGone(err) || !isInDoubt(err)) return;
      if (!(await session.whenUsable())) return;
    }
  }
}
