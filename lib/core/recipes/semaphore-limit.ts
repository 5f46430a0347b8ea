// A semaphore's one maxLeases per path, in this process and recorded in ZooKeeper.
import { LockModeError } from '../errors';
import type { ZkSession } from '../zookeeper/zk-session';
import { ZkCode, codeOf, isInDoubt, isNoNode } from '../zookeeper/zk-errors';
import { limitRecord, recordedLimit } from '../engine/lock-path';

/** The leases node as one read saw it: `version` and `czxid` identify its data over time. */
interface LimitRead {
  data: Buffer | null;
  czxid: bigint;
  version: number;
  leases: number;
}
/** A read of the leases node: null when it does not exist, 'again' when the answer was lost. */
export type PendingRead = Promise<LimitRead | null | 'again'>;
/** What a listing of the leases node tells about its data (czxid and data version). */
export interface LeasesStamp {
  czxid: bigint;
  version: number;
}

const stampOf = (s: LeasesStamp): string => `${s.czxid}/${s.version}`;

/** The limits this process uses, per leases node, while an acquire or a lease is under way. */
export class SemaphoreLimits {
  /** `verified`: the stamp of the leases node last seen recording `maxLeases`. */
  private readonly byPath = new Map<
    string,
    { maxLeases: number; users: number; verified?: string }
  >();

  /** Counts a user of `leasesPath` (an acquire, a lease); LockModeError if it has another limit. */
  use(path: string, leasesPath: string, maxLeases: number): void {
    const inUse = this.byPath.get(leasesPath);
    if (inUse && inUse.maxLeases !== maxLeases) {
      throw limitMismatch(path, inUse.maxLeases, maxLeases, 'in this process');
    }
    if (inUse) inUse.users++;
    else this.byPath.set(leasesPath, { maxLeases, users: 1 });
  }

  /** Forgets the path (and its verified record) when its last user is gone. */
  unuse(leasesPath: string): void {
    const inUse = this.byPath.get(leasesPath);
    if (inUse && --inUse.users === 0) this.byPath.delete(leasesPath);
  }

  /**
   * Called just before the first lease node's create: unless a record was verified earlier (then
   * the listing's stamp tells whether it still stands), reads the record in the same round trip,
   * ahead of the create, so it counts only the others' leases.
   */
  readBeforeCreate(session: ZkSession, leasesPath: string): PendingRead | undefined {
    if (this.byPath.get(leasesPath)?.verified) return undefined;
    const read = readLimit(session, leasesPath);
    read.catch(() => undefined); // awaited by claim(), unless the create fails first
    return read;
  }

  /**
   * Holding the acquirers' mutex, after the first listing that shows our first lease node:
   * LockModeError when other leases stand behind another recorded limit; otherwise ours is (or
   * is now) recorded. A read in doubt is asked again once `untilUsable()` resolved (it throws
   * when the session is gone, or the caller's wait ended).
   */
  async claim(
    session: ZkSession,
    w: { path: string; leasesPath: string; maxLeases: number },
    listed: LeasesStamp,
    pending: PendingRead | undefined,
    untilUsable: () => Promise<void>,
  ): Promise<void> {
    const entry = this.byPath.get(w.leasesPath);
    if (!entry) return;
    if (entry.verified === stampOf(listed)) return; // our record, unchanged since
    let read = pending ? await pending : 'again'; // 'again': read it now
    let own = pending ? 0 : 1; // a pending read was answered before our create
    for (;;) {
      if (read === 'again') await untilUsable();
      if (read !== 'again' && read !== null) {
        const written = await this.check(session, w, read, own);
        if (written) return void (entry.verified = stampOf(written));
      }
      own = 1;
      read = await readLimit(session, w.leasesPath);
      if (read === null) return; // gone with our node: the acquirer's listing sees that
    }
  }

  /** The stamp of the record once it is ours; undefined to read again (changed meanwhile). */
  private async check(
    session: ZkSession,
    w: { path: string; leasesPath: string; maxLeases: number },
    read: LimitRead,
    own: number,
  ): Promise<LeasesStamp | undefined> {
    const recorded = recordedLimit(read.data);
    if (recorded === w.maxLeases) return read;
    if (recorded !== undefined && read.leases - own > 0) {
      throw limitMismatch(
        w.path,
        recorded,
        w.maxLeases,
        `recorded on "${w.leasesPath}" by the processes holding its leases`,
      );
    }
    try {
      await session.setData(w.leasesPath, limitRecord(w.maxLeases), read.version);
      return { czxid: read.czxid, version: read.version + 1 };
    } catch (err) {
      // Changed or removed meanwhile, or the answer was lost: read again.
      if (codeOf(err) !== ZkCode.BAD_VERSION && !isNoNode(err) && !isInDoubt(err)) throw err;
      return undefined;
    }
  }
}

/** Two limits on one semaphore: `where` says who uses the other one. */
function limitMismatch(path: string, inUse: number, asked: number, where: string): LockModeError {
  return new LockModeError(
    path,
    `the semaphore is in use with maxLeases ${inUse} (${where}) and this call asks for ` +
      `maxLeases ${asked}; two limits on one path would let in more holders than the smaller allows`,
    'Pass the same maxLeases from every process that uses this semaphore; to change it, let ' +
      'every lease of the old limit go first',
  );
}

async function readLimit(session: ZkSession, leasesPath: string): PendingRead {
  try {
    const { data, stat } = await session.getData(leasesPath);
    return {
      data,
      czxid: stat.czxid.readBigUInt64BE(0),
      version: stat.version,
      leases: stat.numChildren,
    };
  } catch (err) {
    if (isNoNode(err)) return null;
    if (isInDoubt(err)) return 'again';
    throw err;
  }
}
