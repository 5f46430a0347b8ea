import { randomUUID } from 'node:crypto';
import { CreateMode } from '../zookeeper/zk-client';
import { ZkSession } from '../zookeeper/zk-session';
import { ZkCode, ZkRequestError, isInDoubt, isNoNode } from '../zookeeper/zk-errors';
import { waitUsable } from './contender';
import { ensureLockPath } from './lock-path';
import { deleteWithRetry } from './guaranteed-delete';
import { protectedPrefix } from './lock-naming';

/**
 * One protected EPHEMERAL_SEQUENTIAL node `<dir>/_c_<uuid>-<baseName><seq>` (a semaphore lease):
 * created with lost-reply recovery, deleted with retries (docs/design.md §1.5, §1.6). After a
 * create in doubt, any node with our uuid is ours: one of the current session is adopted, every
 * other one deleted, so no orphan outlives the attempt.
 */
export class ProtectedNode {
  readonly uuid = randomUUID();
  name?: string;
  session?: ZkSession;
  private deletion?: Promise<void>;

  constructor(
    readonly dir: string,
    private readonly baseName: string,
    private readonly data: Buffer,
    /** The data of `dir` if this node's create has to create it (see ensureLockPath). */
    private readonly dirData?: Buffer,
  ) {}

  get path(): string {
    return `${this.dir}/${this.name}`;
  }

  /** Creates the node (again, if it was deleted under us) in `session`. */
  async create(session: ZkSession): Promise<void> {
    this.session = session;
    this.name = undefined;
    this.deletion = undefined;
    const prefix = `${this.dir}/${protectedPrefix(this.uuid)}${this.baseName}`;
    for (;;) {
      try {
        const path = await session.create(prefix, this.data, CreateMode.EPHEMERAL_SEQUENTIAL);
        this.name = path.slice(path.lastIndexOf('/') + 1);
        return;
      } catch (err) {
        if (isNoNode(err)) {
          await ensureLockPath(session, this.dir, this.dirData);
          continue;
        }
        if (!isInDoubt(err)) throw err;
        if (await this.recover(session)) return;
      }
    }
  }

  /** Deletes the node; retries through connection loss until done or the session is gone. */
  remove(): Promise<void> {
    if (!this.name || !this.session) return Promise.resolve();
    this.deletion ??= deleteWithRetry(this.session, this.path);
    return this.deletion;
  }

  /** Finds our node after a create in doubt; true when adopted, false to create again. */
  private async recover(session: ZkSession): Promise<boolean> {
    for (;;) {
      if (!(await waitUsable(session))) {
        throw new ZkRequestError(
          ZkCode.SESSION_GONE,
          'create',
          this.dir,
          'session lost during create',
        );
      }
      try {
        return await this.adoptOwn(session);
      } catch (err) {
        if (isNoNode(err)) return false;
        if (!isInDoubt(err)) throw err;
      }
    }
  }

  private async adoptOwn(session: ZkSession): Promise<boolean> {
    const { children } = await session.getChildren(this.dir);
    const prefix = protectedPrefix(this.uuid);
    for (const child of children.filter((c) => c.startsWith(prefix))) {
      const path = `${this.dir}/${child}`;
      const owner = await session.getData(path).then(
        ({ stat }) => ZkSession.ownerOf(stat),
        (err) => (isNoNode(err) ? undefined : Promise.reject(err)),
      );
      if (owner === session.id && !this.name) this.name = child;
      else if (owner !== undefined) await deleteWithRetry(session, path);
    }
    return this.name !== undefined;
  }
}
