// The semaphore's child watch: one per leases node and client, re-used by every wait for room.
import { ClientClosedError, LockAbortedError, LockTimeoutError } from '../errors';
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

  /** Lists the leases, again after a request in doubt; SessionEnded if the session goes. */
  async list(
    session: ZkSession,
    leasesPath: string,
  ): Promise<{ children: string[]; changed: Promise<void>; stamp: LeasesStamp }> {
    for (;;) {
      try {
        return await this.listOnce(session, leasesPath);
      } catch (err) {
        if (!isInDoubt(err)) throw err;
        if (!(await session.whenUsable())) throw new SessionEnded();
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

/** @internal Until the leases change; throws on timeout, abort, close, or the session's end. */
export function waitForChange(
  w: {
    path: string;
    deadline?: number;
    waitTimeoutMs?: number;
    signal?: AbortSignal;
    maxLeases: number;
  },
  changed: Promise<void>,
  session: ZkSession,
  closed: AbortSignal,
  held: number,
): Promise<void> {
  // An abort or close() that came while the leases were created or listed has fired its event
  // already: a listener added now would never hear it.
  if (w.signal?.aborted) return Promise.reject(new LockAbortedError(w.path, w.signal.reason));
  if (closed.aborted) return Promise.reject(new ClientClosedError(w.path));
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const cleanup = (): void => {
      clearTimeout(timer);
      w.signal?.removeEventListener('abort', onAbort);
      closed.removeEventListener('abort', onClose);
    };
    const fail = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onAbort = (): void => fail(new LockAbortedError(w.path, w.signal!.reason));
    const onClose = (): void => fail(new ClientClosedError(w.path));
    if (w.deadline !== undefined) {
      const ahead = held - w.maxLeases;
      timer = setTimeout(
        () => fail(new LockTimeoutError(w.path, w.waitTimeoutMs!, ahead)),
        Math.max(0, w.deadline - Date.now()),
      );
    }
    w.signal?.addEventListener('abort', onAbort, { once: true });
    closed.addEventListener('abort', onClose, { once: true });
    void changed.then(() => {
      cleanup();
      if (!session.alive) reject(new SessionEnded());
      else resolve();
    });
  });
}
