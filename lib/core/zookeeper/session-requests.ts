/** Owns a session's requests: each built, sent, given a deadline, and answered once. */
import { InvalidLockOptionsError, type ZooKeeperAuthFailedError } from '../errors';
import * as zookeeper from './zk-client';
import type { ZkRequestError } from './zk-errors';
import { chrootOf, corkRequests, queueRequest, registerWatcher } from './nzc-patch';
import { RequestDeadlines } from './request-deadlines';
import type { RoundTrips } from './round-trips';
import { RequestErrors } from './request-errors';
import {
  AclEntry,
  MAX_REQUEST_BYTES,
  OP,
  createOpOf,
  encodeCreate,
  encodeDelete,
  encodePathWatch,
} from './jute-requests';

export interface Listing {
  children: string[];
  /** czxid of the listed node (the lock node), as a bigint. */
  czxid: bigint;
  /** Its Stat's cversion (child changes; see sequence-wrap.ts for how it relates to sequences). */
  cversion: number;
  /** Its data version (with czxid, it tells whether the node's data changed since a read). */
  version: number;
}

/** What the requests are given by the session they belong to. */
export interface RequestsOptions {
  timeoutMs: number;
  /** The client whose connection manager the requests are written to. */
  client: zookeeper.Client;
  /** The ACL of every node created (ZkCredentials.aclList). */
  acl: readonly AclEntry[];
  /** The error for a request once the session takes none (see refuseAll). */
  gone(op: string, path: string): ZkRequestError;
  /** Set once the servers refused our credentials (a request's AUTH_FAILED then says so). */
  authFailure(): ZooKeeperAuthFailedError | undefined;
  /** Told the round trip of each request answered without error (the client's estimate). */
  roundTrips?: RoundTrips;
}

/** node-zookeeper-client's callback shape, with the reply gathered into one value. */
type Start<T> = (cb: (err: any, value: T) => void) => void;

/**
 * A request frame longer than MAX_REQUEST_BYTES: InvalidLockOptionsError, thrown before it is
 * queued. The options and arguments that make up a frame are checked earlier against limits of
 * their own (a lock path, nodeData, a participant id); this catches what they add up to.
 */
function checkFrameSize(frame: Buffer, op: string, path: string): Buffer {
  const bytes = frame.length - 4;
  if (bytes <= MAX_REQUEST_BYTES) return frame;
  throw new InvalidLockOptionsError(
    `ZooKeeper ${op} "${path}"`,
    `its request is ${bytes} bytes, over the limit of ${MAX_REQUEST_BYTES} bytes (the servers' ` +
      'default jute.maxbuffer: a server drops the connection on a longer request)',
    "Shorten what it carries: the lock path, the client's nodeData, or its auth ids with " +
      "acl: 'creator'",
  );
}

/**
 * Every request is built here (the client's own checks, then our jute encoding), gets a deadline
 * (node-zookeeper-client has none) and one answer (a reply, an error we can act on, or
 * REQUEST_TIMEOUT); requests issued together leave in one write (nzc-patch.ts, corkRequests).
 */
export class SessionRequests {
  private readonly cm: unknown;
  /** The connection string's chroot, prefixed to every path we encode. */
  private readonly chroot: string | undefined;
  private readonly deadlines: RequestDeadlines;
  private readonly errors: RequestErrors;
  private refusing = false;

  constructor(private readonly options: RequestsOptions) {
    this.cm = options.client.connectionManager;
    this.chroot = chrootOf(this.cm);
    this.deadlines = new RequestDeadlines(options.timeoutMs);
    this.errors = new RequestErrors(options.timeoutMs, options.authFailure);
  }

  create(path: string, data: Buffer | null, mode: number): Promise<string> {
    const encode = (): Buffer => encodeCreate(0, this.fullPath(path), data, this.options.acl, mode);
    return this.send('create', path, createOpOf(mode), encode, (r) => r.payload.path);
  }

  /** Writes `data` to `path` if the node is still at `version` (the client's own request). */
  setData(path: string, data: Buffer, version: number): Promise<void> {
    return this.request('setData', path, (cb) => {
      corkRequests(this.cm);
      this.options.client.setData(path, data, version, cb);
    });
  }

  /** The ACL of `path`, as the server stores it (the client's own request). */
  getAcl(path: string): Promise<AclEntry[]> {
    return this.request('getACL', path, (cb) => {
      corkRequests(this.cm);
      this.options.client.getACL(path, (err, acls) => cb(err, acls ?? []));
    });
  }

  remove(path: string, version: number): Promise<void> {
    const encode = (): Buffer => encodeDelete(0, this.fullPath(path), version);
    return this.send('delete', path, OP.DELETE, encode, () => undefined);
  }

  async getChildren(path: string, watcher?: zookeeper.Watcher): Promise<Listing> {
    const { children, stat } = await this.read<{ children: string[]; stat: zookeeper.Stat }>(
      'getChildren',
      OP.GET_CHILDREN2,
      path,
      watcher,
    );
    return {
      children,
      czxid: stat.czxid.readBigUInt64BE(0),
      cversion: stat.cversion,
      version: stat.version,
    };
  }

  getData(
    path: string,
    watcher?: zookeeper.Watcher,
  ): Promise<{ data: Buffer | null; stat: zookeeper.Stat }> {
    return this.read('getData', OP.GET_DATA, path, watcher);
  }

  /** The session takes no more requests (closing, lost or ended): each is refused at once. */
  refuseAll(): void {
    this.refusing = true;
  }

  /** The session ended: its deadline timer stops once nothing is pending. */
  idle(): void {
    this.deadlines.idle();
  }

  /** The client could not decode `frames` (see RequestErrors.noteUndecodable). */
  noteUndecodable(frames: Buffer): void {
    this.errors.noteUndecodable(frames);
  }

  /** getChildren2 or getData: the decoded payload; a watcher registered once it succeeded. */
  private read<T>(
    op: 'getChildren' | 'getData',
    type: typeof OP.GET_CHILDREN2 | typeof OP.GET_DATA,
    path: string,
    watcher: zookeeper.Watcher | undefined,
  ): Promise<T> {
    const encode = (): Buffer => encodePathWatch(0, type, this.fullPath(path), !!watcher);
    return this.send(op, path, type, encode, (r) => {
      if (watcher) registerWatcher(this.cm, op === 'getData' ? 'data' : 'child', path, watcher);
      const { children, data, stat } = r.payload;
      return (op === 'getData' ? { data, stat } : { children, stat }) as T;
    });
  }

  /**
   * A request encoded by jute-requests.ts (`encode` throws, as the client's checks do, on a bad
   * path), checked against MAX_REQUEST_BYTES, queued like the client's own (nzc-patch.ts);
   * `answer` reads the Response.
   */
  private send<T>(
    op: string,
    path: string,
    type: number,
    encode: () => Buffer,
    answer: (response: any) => T,
  ): Promise<T> {
    return this.request(op, path, (cb) =>
      queueRequest(this.cm, type, checkFrameSize(encode(), op, path), (err, r) =>
        cb(err, err ? (undefined as T) : answer(r)),
      ),
    );
  }

  /** The client's checks of `path`, then the path as sent: under the chroot, if any. */
  private fullPath(path: string): string {
    zookeeper.validatePath(path);
    const chroot = this.chroot;
    return !chroot ? path : path === '/' ? chroot : chroot + path;
  }

  private request<T>(op: string, path: string, start: Start<T>): Promise<T> {
    if (this.refusing) return Promise.reject(this.options.gone(op, path));
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const sentAt = performance.now();
      const deadline = this.deadlines.add(() => {
        settled = true;
        reject(this.errors.unanswered(op, path));
      });
      try {
        start((err, value) => {
          if (settled) return;
          settled = true;
          this.deadlines.settle(deadline);
          if (err) return reject(this.errors.failed(err, op, path));
          this.options.roundTrips?.observe(performance.now() - sentAt);
          resolve(value);
        });
      } catch (err) {
        // The client's checks of a path are assertions that throw synchronously, and so does
        // checkFrameSize.
        settled = true;
        this.deadlines.settle(deadline);
        reject(err);
      }
    });
  }
}
