/** Owns a session's requests: each built, sent, given a deadline, and answered once. */
import { InvalidLockOptionsError, type ZooKeeperAuthFailedError } from '../errors';
import { Stat, Watcher, validatePath } from './zk-client';
import { type ZkRequestError, isNoNode } from './zk-errors';
import type { ZkWire } from './zk-wire';
import type { ReplyPayload } from './jute-replies';
import type { RoundTrips } from './round-trips';
import { RequestDeadlines } from './request-deadlines';
import { RequestErrors } from './request-errors';
import {
  AclEntry,
  MAX_REQUEST_BYTES,
  OP,
  createOpOf,
  encodeCreate,
  encodeDelete,
  encodeGetAcl,
  encodePathWatch,
  encodeSetData,
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
  /** The wire the requests are written to. */
  wire: ZkWire;
  /** The connection string's chroot, prefixed to every path sent. */
  chroot?: string;
  /** The ACL of every node created (ZkCredentials.aclList). */
  acl: readonly AclEntry[];
  /** The error for a request once the session takes none (see refuseAll). */
  gone(op: string, path: string): ZkRequestError;
  /** Set once the servers refused our credentials (a request's AUTH_FAILED then says so). */
  authFailure(): ZooKeeperAuthFailedError | undefined;
  /** Told the round trip of each request answered without error (the client's estimate). */
  roundTrips?: RoundTrips;
}

/**
 * A request frame longer than MAX_REQUEST_BYTES: InvalidLockOptionsError, thrown before it is
 * sent. The options and arguments that make up a frame are checked earlier against limits of
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
 * Every request is built here (the path's check, then our jute encoding), gets a deadline and
 * one answer (a reply, an error we can act on, or REQUEST_TIMEOUT); requests issued together
 * leave in one write (ZkWire).
 */
export class SessionRequests {
  private readonly deadlines: RequestDeadlines;
  private readonly errors: RequestErrors;
  private refusing = false;

  constructor(private readonly options: RequestsOptions) {
    this.deadlines = new RequestDeadlines(options.timeoutMs);
    this.errors = new RequestErrors(options.timeoutMs, options.authFailure);
  }

  create(path: string, data: Buffer | null, mode: number): Promise<string> {
    const encode = (): Buffer => encodeCreate(0, this.fullPath(path), data, this.options.acl, mode);
    return this.send('create', path, createOpOf(mode), encode, (r) => (r as { path: string }).path);
  }

  /** Writes `data` to `path` if the node is still at `version`; the node's new Stat. */
  setData(path: string, data: Buffer, version: number): Promise<Stat> {
    const encode = (): Buffer => encodeSetData(0, this.fullPath(path), data, version);
    return this.send('setData', path, OP.SET_DATA, encode, (r) => (r as { stat: Stat }).stat);
  }

  /** The ACL of `path`, as the server stores it. */
  getAcl(path: string): Promise<AclEntry[]> {
    const encode = (): Buffer => encodeGetAcl(0, this.fullPath(path));
    return this.send('getACL', path, OP.GET_ACL, encode, (r) => (r as { acl: AclEntry[] }).acl);
  }

  remove(path: string, version: number): Promise<void> {
    const encode = (): Buffer => encodeDelete(0, this.fullPath(path), version);
    return this.send('delete', path, OP.DELETE, encode, () => undefined);
  }

  /**
   * exists('/') with no deadline: true once the server answers it (any answer, a missing chroot
   * node too), false when its connection drops first. Its answer proves the server has the
   * session (docs/design.md 'What "holding" means, and when it ends'); one at a time is enough.
   */
  probe(): Promise<boolean> {
    if (this.refusing) return Promise.resolve(false);
    const frame = encodePathWatch(0, OP.EXISTS, this.fullPath('/'), false);
    return new Promise((resolve) =>
      this.options.wire.request(OP.EXISTS, frame, (err) => resolve(!err || isNoNode(err))),
    );
  }

  async getChildren(path: string, watcher?: Watcher): Promise<Listing> {
    const { children, stat } = await this.read<{ children: string[]; stat: Stat }>(
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

  getData(path: string, watcher?: Watcher): Promise<{ data: Buffer | null; stat: Stat }> {
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

  /** getChildren2 or getData: the decoded payload; a watcher registered once it succeeded. */
  private read<T>(
    op: 'getChildren' | 'getData',
    type: typeof OP.GET_CHILDREN2 | typeof OP.GET_DATA,
    path: string,
    watcher: Watcher | undefined,
  ): Promise<T> {
    const encode = (): Buffer => encodePathWatch(0, type, this.fullPath(path), !!watcher);
    return this.send(op, path, type, encode, (r) => {
      if (watcher) this.options.wire.watch(op === 'getData' ? 'data' : 'child', path, watcher);
      const { children, data, stat } = r as { children?: string[]; data?: Buffer; stat: Stat };
      return (op === 'getData' ? { data, stat } : { children, stat }) as T;
    });
  }

  /**
   * A request encoded by jute-requests.ts (`encode` throws on a bad path, before anything is
   * sent), checked against MAX_REQUEST_BYTES, written by the wire; `answer` reads the payload.
   */
  private send<T>(
    op: string,
    path: string,
    type: number,
    encode: () => Buffer,
    answer: (payload: ReplyPayload) => T,
  ): Promise<T> {
    if (this.refusing) return Promise.reject(this.options.gone(op, path));
    return new Promise<T>((resolve, reject) => {
      // The path's check and the frame's size throw synchronously: the promise rejects with it.
      const frame = checkFrameSize(encode(), op, path);
      let settled = false;
      const deadline = this.deadlines.add(() => {
        settled = true;
        reject(this.errors.unanswered(op, path));
      });
      const sentAt = performance.now();
      this.options.wire.request(type, frame, (err, payload) => {
        if (settled) return;
        settled = true;
        this.deadlines.settle(deadline);
        if (err) return reject(this.errors.failed(err, op, path));
        this.options.roundTrips?.observe(performance.now() - sentAt);
        resolve(answer(payload ?? null));
      });
    });
  }

  /** The path's check, then the path as sent: under the chroot, if any. */
  private fullPath(path: string): string {
    validatePath(path);
    const chroot = this.options.chroot;
    return !chroot ? path : path === '/' ? chroot : chroot + path;
  }
}
