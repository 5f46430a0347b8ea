// The protected node every recipe creates: its `_c_<uuid>-` name, lost-reply recovery and delete.
import { randomUUID } from 'node:crypto';
import { UnexpectedAclError } from '../errors';
import type { AclEntry } from '../zookeeper/zk-client';
import { CreateMode } from '../zookeeper/zk-client';
import { ZkCode, ZkRequestError, isInDoubt, isNoNode, isSessionGone } from '../zookeeper/zk-errors';
import { type Listing, ZkSession } from '../zookeeper/zk-session';
import { ensureLockPath, withDefaults, type Recovery } from './lock-path';

/**
 * Deletes `path`, retrying through connection loss until done or the session is gone: an orphan
 * node would block every later caller until the session ends (docs/design.md "The mutex recipe").
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

/** Prefix of every node one attempt creates; the uuid finds it again after a lost reply. */
function protectedPrefix(uuid: string): string {
  return `_c_${uuid}-`;
}

/** @internal The children that one attempt with this uuid created (by its protected prefix). */
export function ownNodes(children: readonly string[], uuid: string): string[] {
  const prefix = protectedPrefix(uuid);
  return children.filter((c) => c.startsWith(prefix));
}

/**
 * @internal
 * How many more answers in doubt recovery takes once nobody waits for the node any more (the
 * caller gave up, or close() ended the wait): then it stops. Enough for a reconnect after a lost
 * reply (the usual case), while a path whose every request makes the server drop the connection
 * (longer than its jute.maxbuffer) no longer reconnects forever, and close() can finish. A node
 * not found then (if the server created one at all) goes with the session.
 */
export const DOUBTS_AFTER_WAIT = 2;

/**
 * @internal
 * One EPHEMERAL_SEQUENTIAL node `<dir>/_c_<uuid>-<baseName><seq>`, as Curator's withProtection()
 * (docs/design.md "The mutex recipe"): the uuid finds it again after a create whose reply was
 * lost. Then any node with our uuid is ours: one of the current session is adopted, every other
 * one deleted (a create in doubt can commit twice), so no orphan outlives the attempt. Deleted
 * with retries. Shared by the lock recipes (through their Contender) and the semaphore's leases.
 */
export class ProtectedNode {
  readonly uuid = randomUUID();
  private ownName?: string;
  private ownSession?: ZkSession;
  private deletion?: Promise<void>;
  /** Other nodes with our uuid (a create in doubt that committed twice), being deleted. */
  private readonly strays = new Map<string, Promise<void>>();

  constructor(
    readonly dir: string,
    private readonly baseName: string,
    private readonly data: Buffer,
  ) {}

  /** Our node's name once created (or adopted); undefined before. */
  get name(): string | undefined {
    return this.ownName;
  }

  /** The session the node was created in. */
  get session(): ZkSession | undefined {
    return this.ownSession;
  }

  get path(): string {
    return `${this.dir}/${this.ownName}`;
  }

  /**
   * Sends the create and nothing else (a caller that lists in the same tick gets one round trip):
   * resolves with the node's name, which the caller then adopt()s.
   */
  send(session: ZkSession): Promise<string> {
    this.ownSession = session;
    const prefix = `${this.dir}/${protectedPrefix(this.uuid)}${this.baseName}`;
    // With acl: 'creator', the directory's ACL is read in the same write, ahead of the create:
    // its answer comes first, so checking it costs the server one request and no round trip.
    const acl = session.checksAcl ? session.getAcl(this.dir).catch(() => undefined) : undefined;
    const created = session
      .create(prefix, this.data, CreateMode.EPHEMERAL_SEQUENTIAL)
      .then((path) => path.slice(path.lastIndexOf('/') + 1));
    if (!acl) return created;
    return created.then(async (name) => {
      await this.checkDir(session, [name], await acl);
      return name;
    });
  }

  /**
   * With acl: 'creator', a directory whose ACL lets other identities in (docs/guides/security.md)
   * gets nothing of ours: `names` (our nodes in it) are deleted, then UnexpectedAclError. `read`:
   * the ACL read with the create, undefined when that read failed (the directory was created
   * between the two requests, or the answer was lost), then read again.
   */
  private async checkDir(
    session: ZkSession,
    names: readonly string[],
    read?: readonly AclEntry[],
  ): Promise<void> {
    try {
      session.checkAcl(this.dir, read ?? (await session.getAcl(this.dir)));
    } catch (err) {
      if (err instanceof UnexpectedAclError) {
        await Promise.all(names.map((name) => deleteWithRetry(session, `${this.dir}/${name}`)));
      }
      throw err;
    }
  }

  /** Takes `name` as our node. */
  adopt(name: string): void {
    this.ownName = name;
  }

  /** Forgets our node's name (deleted by us, to be created anew). */
  forget(): void {
    this.ownName = undefined;
    this.deletion = undefined;
  }

  /**
   * Creates the node (again, if it was deleted under us) in `session`, with `dirData` as the data
   * of `dir` if it has to be created (see ensureLockPath); finds it after a lost reply (see
   * recover for `recovery`). No name afterwards: recovery gave up, and no node was found.
   */
  async create(session: ZkSession, dirData?: Buffer, recovery: Recovery = {}): Promise<void> {
    this.forget();
    for (;;) {
      try {
        return this.adopt(await this.send(session));
      } catch (err) {
        if (isNoNode(err)) {
          if (await ensureLockPath(session, this.dir, dirData, recovery)) continue;
          return; // gave up while creating `dir`: no node of ours
        }
        if (!isInDoubt(err)) throw err;
        if ((await this.recover(session, recovery)) !== 'not-found') return;
      }
    }
  }

  /**
   * The create's reply was lost: once the session is usable, finds our node by uuid and adopts it
   * if it belongs to `session`, deleting every other node with our uuid. Returns the listing that
   * showed it; 'not-found' to create again; 'gave-up' when a request of its own was in doubt and
   * `recovery.keepGoing()` said stop. Looks again while its own requests are in doubt: giving up
   * would leave a node the server may still create, and it would hold the lock for as long as the
   * session lives (docs/design.md "The mutex recipe"). Rejects with SESSION_GONE if it is lost.
   */
  async recover(
    session: ZkSession,
    recovery: Recovery = {},
  ): Promise<Listing | 'not-found' | 'gave-up'> {
    const { keepGoing, usable } = withDefaults(recovery);
    for (;;) {
      if (!(await usable(session))) {
        throw new ZkRequestError(
          ZkCode.SESSION_GONE,
          'create',
          this.dir,
          'session lost during create',
        );
      }
      try {
        return await this.findOwn(session);
      } catch (err) {
        if (isNoNode(err)) return 'not-found'; // the directory (or our node) is gone
        if (!isInDoubt(err)) throw err;
        if (!keepGoing()) return 'gave-up';
      }
    }
  }

  /**
   * The nodes of `children` with our uuid besides ours (a create in doubt that committed twice):
   * deleted now, or we would wait behind our own node for as long as the session lives.
   */
  deleteStrays(children: readonly string[]): string[] {
    const strays = ownNodes(children, this.uuid).filter((c) => c !== this.ownName);
    for (const name of strays) {
      if (this.strays.has(name) || !this.ownSession) continue;
      const deletion = deleteWithRetry(this.ownSession, `${this.dir}/${name}`);
      this.strays.set(name, deletion);
      void deletion.finally(() => this.strays.delete(name));
    }
    return strays;
  }

  /**
   * Deletes the node (and any strays) through `session`, by default its own; retries through
   * connection loss until done or that session is gone.
   */
  remove(session = this.ownSession): Promise<void> {
    // Without strays (nearly always), no promises to join: the delete's own.
    const strays =
      this.strays.size === 0 ? undefined : Promise.all(this.strays.values()).then(() => undefined);
    if (!this.ownName || !session) return strays ?? Promise.resolve();
    this.deletion ??= strays
      ? Promise.all([deleteWithRetry(session, this.path), strays]).then(() => undefined)
      : deleteWithRetry(session, this.path);
    return this.deletion;
  }

  /** Lists `dir`: adopts our node of `session`, deletes the others with our uuid. */
  private async findOwn(session: ZkSession): Promise<Listing | 'not-found'> {
    const listing = await session.getChildren(this.dir);
    if (session.checksAcl) await this.checkDir(session, ownNodes(listing.children, this.uuid));
    let own: string | undefined;
    for (const child of ownNodes(listing.children, this.uuid)) {
      const path = `${this.dir}/${child}`;
      const owner = await session.getData(path).then(
        ({ stat }) => ZkSession.ownerOf(stat),
        (err) => (isNoNode(err) ? undefined : Promise.reject(err)),
      );
      if (owner === undefined) continue;
      if (owner === session.id && !own) own = child;
      else await deleteWithRetry(session, path);
    }
    if (!own) return 'not-found';
    this.adopt(own);
    return listing;
  }
}
