// The semaphore's child watch: one per leases node and client, re-used by every wait for room.
import type { ZkSession } from '../zookeeper/zk-session';
import { isInDoubt } from '../zookeeper/zk-errors';
import type { LeasesStamp } from './semaphore-limit';

/** @internal The session ended while we waited for room: try again in the new one, if time is left. */
export class SessionEnded extends Error {}

/**
 * @internal
 * The child watches a client keeps on its semaphores' leases nodes: one armed per leases node
 * (no pile-up of watches), fired when its session is lost.
 */
export class LeasesWatches {
  private readonly watches = new Map<
    string,
    { session: ZkSession; changed: Promise<void>; fire: () => void }
  >();

  /** The session is gone: every watch armed on it fires (its waits find the session ended). */
  onSessionLost(session: ZkSession): void {
    for (const [path, watch] of this.watches) {
      if (watch.session !== session) continue;
      this.watches.delete(path);
      watch.fire();
    }
  }

  /**
   * Lists the leases, again after a request in doubt once `untilUsable()` resolved (it throws
   * SessionEnded if the session goes, or the end of the caller's wait).
   */
  async list(
    session: ZkSession,
    leasesPath: string,
    untilUsable: () => Promise<void>,
  ): Promise<{ children: string[]; changed: Promise<void>; stamp: LeasesStamp }> {
    for (;;) {
      try {
        return await this.listOnce(session, leasesPath);
      } catch (err) {
        if (!isInDoubt(err)) throw err;
        await untilUsable();
      }
    }
  }

  /** Lists the leases; keeps one child watch per leases node armed (no pile-up of watches). */
  private async listOnce(
    session: ZkSession,
    leasesPath: string,
  ): Promise<{ children: string[]; changed: Promise<void>; stamp: LeasesStamp }> {
    const armed = this.watches.get(leasesPath);
    if (armed?.session === session) {
      const { children, czxid, version } = await session.getChildren(leasesPath);
      return { children, changed: armed.changed, stamp: { czxid, version } };
    }
    let fire!: () => void;
    const changed = new Promise<void>((resolve) => (fire = resolve));
    const entry = { session, changed, fire };
    this.watches.set(leasesPath, entry);
    const forget = (): void => {
      if (this.watches.get(leasesPath) === entry) this.watches.delete(leasesPath);
    };
    try {
      const { children, czxid, version } = await session.getChildren(leasesPath, () => {
        forget();
        fire();
      });
      return { children, changed, stamp: { czxid, version } };
    } catch (err) {
      forget();
      throw err;
    }
  }
}
