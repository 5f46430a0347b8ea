/**
 * A plain node-zookeeper-client session for test assertions only: counts and lists znodes,
 * removes a test root. Never used by lib/ (the library's own adapter is what is under test).
 */
import { randomBytes } from 'node:crypto';
import { scaled } from '../../support/time-scale';

// node-zookeeper-client ships no types; declare only what the tests use.
interface RawStat {
  czxid: Buffer;
  numChildren: number;
  cversion: number;
  ephemeralOwner: Buffer;
}
interface RawClient {
  connect(): void;
  close(): void;
  once(event: 'connected', listener: () => void): void;
  getChildren(path: string, cb: (err: RawError | null, children: string[]) => void): void;
  getChildren(
    path: string,
    watcher: () => void,
    cb: (err: RawError | null, children: string[]) => void,
  ): void;
  exists(path: string, cb: (err: RawError | null, stat: RawStat | null) => void): void;
  remove(path: string, version: number, cb: (err: RawError | null) => void): void;
  mkdirp(path: string, cb: (err: RawError | null) => void): void;
  create(
    path: string,
    data: Buffer | undefined,
    mode: number,
    cb: (err: RawError | null, path: string) => void,
  ): void;
  getData(path: string, cb: (err: RawError | null, data: Buffer | null) => void): void;
  setData(path: string, data: Buffer, version: number, cb: (err: RawError | null) => void): void;
  addAuthInfo(scheme: string, auth: Buffer): void;
  getACL(path: string, cb: (err: RawError | null, acls: RawAcl[]) => void): void;
}
interface RawAcl {
  permission: number;
  id: { scheme: string; id: string };
}
interface RawError extends Error {
  getCode(): number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const zookeeper = require('node-zookeeper-client') as {
  createClient(connectionString: string, options: { sessionTimeout: number }): RawClient;
};

const NO_NODE = -101;

/** `/test-<file>-<random>`: each test file works under its own root. */
export function testRoot(file: string): string {
  return `/test-${file}-${randomBytes(4).toString('hex')}`;
}

/** The client port of the first server in a connection string ("127.0.0.1:2181,..."). */
export function clientPortOf(connectionString: string): number {
  return Number(connectionString.split(',')[0].split(':')[1]);
}

export function zkConnectFromEnv(): string {
  const value = process.env.ZK_CONNECT;
  if (!value)
    throw new Error(
      'ZK_CONNECT is not set: run through the test runner (its global setup starts ZooKeeper)',
    );
  return value;
}

export class ZkAdmin {
  private constructor(
    private readonly client: RawClient,
    private readonly connectionString: string,
    private readonly requestTimeoutMs: number,
  ) {}

  /**
   * `auth`: digest "user:password" credentials (for nodes created with acl: 'creator').
   * `requestTimeoutMs`: how long a request may go unanswered. By default longer than the admin's
   * 30 s session timeout, so one sent while the server restarts or is frozen still gets its
   * answer, and well within the runner's 120 s per-test timeout, so a server that never answers
   * fails the step by its name (op and path) instead of by the test's timeout.
   */
  static connect(
    connectionString: string,
    timeoutMs = scaled(30_000),
    auth: string[] = [],
    requestTimeoutMs = scaled(60_000),
  ): Promise<ZkAdmin> {
    const client = zookeeper.createClient(connectionString, { sessionTimeout: 30_000 });
    for (const credential of auth) client.addAuthInfo('digest', Buffer.from(credential));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        client.close();
        reject(
          new Error(`test admin client: no session with ${connectionString} in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      client.once('connected', () => {
        clearTimeout(timer);
        resolve(new ZkAdmin(client, connectionString, requestTimeoutMs));
      });
      client.connect();
    });
  }

  /** Children of `path`, or [] when it does not exist. */
  async children(path: string): Promise<string[]> {
    try {
      return await this.request<string[]>('getChildren', path, (cb) =>
        this.client.getChildren(path, cb),
      );
    } catch (err) {
      if (isNoNode(err)) return [];
      throw err;
    }
  }

  /**
   * Arms a child watch on `path` (which must exist); resolves once it is armed with `changed`,
   * which settles when a child of `path` is next created or deleted.
   */
  async watchChildren(path: string): Promise<{ changed: Promise<void> }> {
    let fire!: () => void;
    const changed = new Promise<void>((resolve) => (fire = resolve));
    await this.request<string[]>('getChildren with a watch', path, (cb) =>
      this.client.getChildren(path, () => fire(), cb),
    );
    return { changed };
  }

  async exists(path: string): Promise<boolean> {
    return !!(await this.request<RawStat | null>('exists', path, (cb) =>
      this.client.exists(path, cb),
    ));
  }

  /** How many times children of `path` were created or deleted (its Stat's cversion). */
  async childChanges(path: string): Promise<number> {
    return (await this.stat(path)).cversion;
  }

  /**
   * Creates `path` (its missing parents persistent, empty) with `data`; 'ephemeral' in our
   * session; 'sequential' appends ZooKeeper's counter. Resolves with the created path.
   */
  async create(
    path: string,
    data: string,
    mode: 'persistent' | 'ephemeral' | 'sequential',
  ): Promise<string> {
    const parent = path.slice(0, path.lastIndexOf('/'));
    if (parent) await this.request('mkdirp', parent, (cb) => this.client.mkdirp(parent, cb));
    const flags = { persistent: 0, ephemeral: 1, sequential: 2 }[mode];
    return this.request<string>('create', path, (cb) =>
      this.client.create(path, Buffer.from(data), flags, cb),
    );
  }

  /** The node's data as text ('' for none). */
  async getData(path: string): Promise<string> {
    const data = await this.request<Buffer | null>('getData', path, (cb) =>
      this.client.getData(path, cb),
    );
    return data?.toString() ?? '';
  }

  setData(path: string, data: string): Promise<void> {
    return this.request('setData', path, (cb) =>
      this.client.setData(path, Buffer.from(data), -1, cb),
    );
  }

  /** The node's ACL as `scheme:id` with the permission bits (31 = all). */
  async acl(path: string): Promise<Array<{ id: string; permission: number }>> {
    const acls = await this.request<RawAcl[]>('getACL', path, (cb) => this.client.getACL(path, cb));
    return acls.map((a) => ({ id: `${a.id.scheme}:${a.id.id}`, permission: a.permission }));
  }

  /** Deletes one node (any version). */
  remove(path: string): Promise<void> {
    return this.request('remove', path, (cb) => this.client.remove(path, -1, cb));
  }

  /**
   * The session that owns the ephemeral node `path`, in hex as ZooKeeper's log writes it
   * (`0x` + this); '0' for a persistent node.
   */
  async ephemeralOwner(path: string): Promise<string> {
    return (await this.stat(path)).ephemeralOwner.readBigUInt64BE(0).toString(16);
  }

  /** The zxid that created `path`. */
  async czxid(path: string): Promise<bigint> {
    return (await this.stat(path)).czxid.readBigUInt64BE(0);
  }

  /**
   * The sequence number the next sequential child of `path` gets: ZooKeeper's stored child
   * counter (creates only), which the Stat shows as cversion = 2 * counter - numChildren.
   */
  async nextSequence(path: string): Promise<number> {
    const stat = await this.stat(path);
    return ((stat.cversion >>> 0) + stat.numChildren) / 2;
  }

  /** Number of znodes strictly below `path` (0 when it does not exist). */
  async countDescendants(path: string): Promise<number> {
    let count = 0;
    for (const child of await this.children(path)) {
      count += 1 + (await this.countDescendants(`${path}/${child}`));
    }
    return count;
  }

  /** Removes `path` and everything below it; missing nodes are fine. */
  async removeTree(path: string): Promise<void> {
    for (const child of await this.children(path)) await this.removeTree(`${path}/${child}`);
    await this.remove(path).catch((err) => {
      if (!isNoNode(err)) throw err;
    });
  }

  close(): void {
    this.client.close();
  }

  private async stat(path: string): Promise<RawStat> {
    const stat = await this.request<RawStat | null>('exists', path, (cb) =>
      this.client.exists(path, cb),
    );
    if (!stat) throw new Error(`${path} is gone`);
    return stat;
  }

  /** Sends one request; fails naming `op` and `path` when no answer comes in time. */
  private request<T = void>(
    op: string,
    path: string,
    send: (cb: (err: RawError | null, result?: T) => void) => void,
  ): Promise<T> {
    const { connectionString, requestTimeoutMs } = this;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const what = `${op} ${path} from ${connectionString} in ${requestTimeoutMs} ms`;
        reject(new Error(`test admin: no answer to ${what}`));
      }, requestTimeoutMs);
      send((err, result) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(result as T);
      });
    });
  }
}

function isNoNode(err: unknown): boolean {
  return typeof (err as RawError).getCode === 'function' && (err as RawError).getCode() === NO_NODE;
}

/**
 * `promise`, or a failure naming `what` when it has not settled within `timeoutMs`: a step that
 * hangs fails by its name instead of by the test's timeout.
 */
export async function settlesWithin<T>(
  what: string,
  promise: Promise<T>,
  timeoutMs = scaled(30_000),
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Not settled after ${timeoutMs} ms: ${what}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` until it returns true; throws with `what` after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = scaled(30_000),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Still not true after ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether `promise` has settled (fulfilled or rejected) by the time it is asked. */
export function settledFlag(promise: Promise<unknown>): () => boolean {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  return () => done;
}
