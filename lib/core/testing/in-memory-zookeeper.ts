// InMemoryZooKeeper: a ZooKeeper server in this process, for tests without Java.
import { createHash, randomBytes } from 'node:crypto';
import { AddressInfo, Server, Socket, createServer } from 'node:net';
import { JuteReader, JuteWriter } from './jute';

/** Options of InMemoryZooKeeper.start(). */
export interface InMemoryZooKeeperOptions {
  /**
   * How often empty CONTAINER nodes are deleted (ZooKeeper's `znode.container.checkIntervalMs`,
   * 60 s on a real server). Default 100 ms.
   */
  containerCheckIntervalMs?: number;
  /** The port to listen on, on 127.0.0.1 (default: a port the OS picks). */
  port?: number;
}

/**
 * A ZooKeeper server in this process, in memory, on a loopback port: enough of the protocol for
 * this library's client (sessions, ephemeral, sequential and container nodes, data/exists/child
 * watches, versions, session expiry, ACLs as stored, multis of creates). `ZkLockTestingModule`
 * and plain tests (a ZkLockClient on its connectionString) run the real lock engine against it,
 * so tests without Java get the same recipes, order and errors as production (docs/design.md
 * "Testing without ZooKeeper"). Not a ZooKeeper for anything but tests: one member, no disk, no ACL checks
 * (getACL answers what a create stored, `auth` entries as the digest ids of the session).
 */
export class InMemoryZooKeeper {
  private readonly nodes = new Map<string, ZNode>();
  private readonly sessions = new Map<bigint, Session>();
  private readonly dataWatches = new Map<string, Set<Connection>>();
  private readonly childWatches = new Map<string, Set<Connection>>();
  private readonly connections = new Set<Connection>();
  private zxid = 0n;
  /** The sweep that deletes empty containers, as ZooKeeper's ContainerManager does. */
  private readonly containerSweep: NodeJS.Timeout;

  private constructor(
    private readonly server: Server,
    containerCheckIntervalMs: number,
  ) {
    this.nodes.set('/', newNode(0n, null, 0n, OPEN_ACL));
    server.on('connection', (socket) => this.accept(socket));
    this.containerSweep = setInterval(() => this.sweepContainers(), containerCheckIntervalMs);
    this.containerSweep.unref();
  }

  /** Listens on 127.0.0.1 only, on `port` (default: a port the OS picks). */
  static async start(options: InMemoryZooKeeperOptions = {}): Promise<InMemoryZooKeeper> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    return new InMemoryZooKeeper(server, options.containerCheckIntervalMs ?? 100);
  }

  get connectionString(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Hex ids of the sessions alive now. */
  get sessionIds(): string[] {
    return [...this.sessions.keys()].map((id) => id.toString(16));
  }

  /** Paths of every node but the root, sorted (for assertions: "nothing left behind"). */
  paths(): string[] {
    return [...this.nodes.keys()].filter((p) => p !== '/').sort();
  }

  /**
   * Expires sessions as ZooKeeper does when it has not heard from a client for its session
   * timeout: their ephemeral nodes (lock nodes) go, and their clients learn it on reconnect.
   * Without an id: every session.
   */
  expireSessions(id?: string): void {
    for (const session of [...this.sessions.values()]) {
      if (id !== undefined && session.id.toString(16) !== id.replace(/^0+/, '')) continue;
      const connection = session.connection;
      this.expire(session);
      connection?.socket.destroy();
    }
  }

  /** Drops every connection and stops listening; the state is gone. */
  async close(): Promise<void> {
    clearInterval(this.containerSweep);
    for (const session of this.sessions.values()) clearTimeout(session.expiry);
    for (const connection of this.connections) connection.socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const connection: Connection = { socket };
    this.connections.add(connection);
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.once('close', () => this.disconnected(connection));
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(4, 4 + pending.readInt32BE(0));
        pending = pending.subarray(4 + frame.length);
        if (connection.session) this.request(connection, new JuteReader(frame));
        else this.handshake(connection, new JuteReader(frame));
      }
    });
  }

  private handshake(connection: Connection, r: JuteReader): void {
    r.int(); // protocolVersion
    r.long(); // lastZxidSeen
    const timeoutMs = r.int();
    const requested = r.long();
    const passwd = r.buffer() ?? Buffer.alloc(16);
    let session = requested === 0n ? undefined : this.sessions.get(requested);
    if (requested === 0n) {
      const id = BigInt(`0x1${randomBytes(7).toString('hex')}`) & 0x7fffffffffffffffn;
      session = { id, passwd: randomBytes(16), timeoutMs, ephemerals: new Set(), auth: [] };
      this.sessions.set(id, session);
    } else if (!session || !session.passwd.equals(passwd)) {
      // Unknown or expired: a zero timeout tells the client its session is gone.
      connection.socket.end(
        new JuteWriter().int(0).int(0).long(0n).buffer(Buffer.alloc(16)).frame(),
      );
      return;
    }
    session.connection?.socket.destroy();
    session.connection = connection;
    connection.session = session;
    this.armExpiry(session);
    connection.socket.write(
      new JuteWriter()
        .int(0)
        .int(session.timeoutMs)
        .long(session.id)
        .buffer(session.passwd)
        .frame(),
    );
  }

  private disconnected(connection: Connection): void {
    this.connections.delete(connection);
    for (const watchers of [...this.dataWatches.values(), ...this.childWatches.values()]) {
      watchers.delete(connection);
    }
    const session = connection.session;
    if (!session || session.connection !== connection || !this.sessions.has(session.id)) return;
    session.connection = undefined;
    this.armExpiry(session);
  }

  /**
   * A session expires once the server has heard nothing from it for its timeout, connected or
   * not, as ZooKeeper's session tracker does: a paused client keeps its socket open and silent.
   * Its connection is then dropped; the client learns of the expiry when it reconnects.
   */
  private armExpiry(session: Session): void {
    clearTimeout(session.expiry);
    session.expiry = setTimeout(() => {
      const connection = session.connection;
      this.expire(session);
      connection?.socket.destroy();
    }, session.timeoutMs);
    session.expiry.unref();
  }

  private request(connection: Connection, r: JuteReader): void {
    const xid = r.int();
    const type = r.int();
    const session = connection.session!;
    if (!this.sessions.has(session.id)) {
      connection.socket.end(
        new JuteWriter().int(xid).long(this.zxid).int(ERR.SESSION_EXPIRED).frame(),
      );
      return;
    }
    session.expiry?.refresh(); // heard from it
    let err = 0;
    let body: JuteWriter | undefined;
    try {
      body = this.apply(type, r, connection, session);
    } catch (code) {
      if (typeof code !== 'number') throw code;
      err = code;
    }
    const reply = new JuteWriter().int(xid).long(this.zxid).int(err);
    connection.socket.write(body && err === 0 ? concatFrame(reply, body) : reply.frame());
    if (type === OP.CLOSE_SESSION) connection.socket.end();
  }

  /** Runs one request; throws a ZooKeeper error code. */
  private apply(
    type: number,
    r: JuteReader,
    connection: Connection,
    session: Session,
  ): JuteWriter | undefined {
    switch (type) {
      case OP.PING:
        return undefined;
      case OP.AUTH: {
        r.int(); // type
        const scheme = r.string();
        const auth = r.buffer()?.toString('utf8') ?? '';
        if (scheme === 'digest') session.auth.push(digestId(auth));
        return undefined;
      }
      case OP.CLOSE_SESSION:
        this.expire(session);
        return undefined;
      case OP.CREATE:
      case OP.CREATE_CONTAINER:
        return this.created(this.make(this.check(readCreate(r, session, type)), session));
      case OP.MULTI:
        return this.multi(r, session);
      case OP.GET_ACL: {
        const node = this.nodes.get(r.string());
        if (!node) throw ERR.NO_NODE;
        const w = new JuteWriter().int(node.acl.length);
        for (const a of node.acl) w.int(a.perms).string(a.scheme).string(a.id);
        return writeStat(w, node);
      }
      case OP.DELETE: {
        const path = r.string();
        this.remove(path, r.int());
        return undefined;
      }
      case OP.EXISTS:
      case OP.GET_DATA: {
        const path = r.string();
        const watch = r.bool();
        const node = this.nodes.get(path);
        if (watch && (node || type === OP.EXISTS)) watchOn(this.dataWatches, path, connection);
        if (!node) throw ERR.NO_NODE;
        const w = new JuteWriter();
        if (type === OP.GET_DATA) w.buffer(node.data);
        return writeStat(w, node);
      }
      case OP.SET_DATA: {
        const path = r.string();
        const data = r.buffer();
        const version = r.int();
        const node = this.existing(path, version);
        node.data = data;
        node.version++;
        node.mzxid = ++this.zxid;
        node.mtime = BigInt(Date.now());
        this.fire(this.dataWatches, path, EVENT.DATA_CHANGED);
        return writeStat(new JuteWriter(), node);
      }
      case OP.GET_CHILDREN:
      case OP.GET_CHILDREN2: {
        const path = r.string();
        const watch = r.bool();
        const node = this.nodes.get(path);
        if (!node) throw ERR.NO_NODE;
        if (watch) watchOn(this.childWatches, path, connection);
        const w = new JuteWriter().strings([...node.children]);
        return type === OP.GET_CHILDREN2 ? writeStat(w, node) : w;
      }
      case OP.SET_WATCHES:
        this.setWatches(r, connection);
        return undefined;
      default:
        throw ERR.UNIMPLEMENTED;
    }
  }

  /**
   * A multi of creates, all or none: each is checked against the nodes the ones before it make,
   * then all are made. Its results as a real server writes them: a failure says 0 in the
   * ReplyHeader and each op's code among the results (0 before the failing one, -2 after it).
   */
  private multi(r: JuteReader, session: Session): JuteWriter {
    const creates: Create[] = [];
    for (let type = r.int(); !r.bool(); type = r.int()) {
      r.int(); // err
      if (type !== OP.CREATE && type !== OP.CREATE_CONTAINER) throw ERR.UNIMPLEMENTED;
      creates.push(readCreate(r, session, type));
    }
    const made = new Set<string>();
    let failed: { at: number; code: number } | undefined;
    for (const [at, create] of creates.entries()) {
      try {
        made.add(this.check(create, made).path);
      } catch (code) {
        if (typeof code !== 'number') throw code;
        failed = { at, code };
        break;
      }
    }
    const w = new JuteWriter();
    creates.forEach((create, at) => {
      if (!failed) return w.append(this.created(this.make(create, session), true));
      const code = at < failed.at ? 0 : at === failed.at ? failed.code : ERR.RUNTIME_INCONSISTENCY;
      w.int(-1).bool(false).int(code).int(code);
    });
    return w.int(-1).bool(true).int(-1);
  }

  /**
   * A create's result: the path, with the Stat for a container (create2's); in a multi behind its
   * MultiHeader.
   */
  private created(path: string, inMulti = false): JuteWriter {
    const node = this.nodes.get(path)!;
    const container = node.ephemeralOwner === CONTAINER_OWNER;
    const w = new JuteWriter();
    if (inMulti)
      w.int(container ? OP.CREATE2 : OP.CREATE)
        .bool(false)
        .int(0);
    w.string(path);
    return container ? writeStat(w, node) : w;
  }

  /** Throws the code a create would fail with, `made` (by earlier ops of a multi) counted. */
  private check(create: Create, made = new Set<string>()): Create {
    const parentPath = parentOf(create.path);
    const parent = this.nodes.get(parentPath);
    if ((!parent && !made.has(parentPath)) || create.path === '/') throw ERR.NO_NODE;
    if (parent && parent.ephemeralOwner !== 0n && parent.ephemeralOwner !== CONTAINER_OWNER) {
      throw ERR.NO_CHILDREN_FOR_EPHEMERALS;
    }
    const sequential = (create.flags & FLAG.SEQUENTIAL) !== 0;
    if (!sequential && (this.nodes.has(create.path) || made.has(create.path))) {
      throw ERR.NODE_EXISTS;
    }
    return create;
  }

  /** Makes a checked create's node; its path (a sequential one's with the parent's counter). */
  private make({ path, data, acl, flags }: Create, session: Session): string {
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath)!;
    if (flags & FLAG.SEQUENTIAL) path += String(parent.cversion).padStart(10, '0');
    if (this.nodes.has(path)) throw ERR.NODE_EXISTS;
    const ephemeral = (flags & FLAG.EPHEMERAL) !== 0;
    const zxid = ++this.zxid;
    const owner = ephemeral ? session.id : flags === FLAG.CONTAINER ? CONTAINER_OWNER : 0n;
    this.nodes.set(path, newNode(zxid, data, owner, acl));
    if (ephemeral) session.ephemerals.add(path);
    parent.children.add(path.slice(parentPath.length === 1 ? 1 : parentPath.length + 1));
    parent.cversion++;
    parent.pzxid = zxid;
    this.fire(this.dataWatches, path, EVENT.CREATED);
    this.fire(this.childWatches, parentPath, EVENT.CHILDREN_CHANGED);
    return path;
  }

  private remove(path: string, version: number): void {
    const node = this.existing(path, version);
    if (node.children.size > 0) throw ERR.NOT_EMPTY;
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath)!;
    this.nodes.delete(path);
    if (node.ephemeralOwner !== 0n) this.sessions.get(node.ephemeralOwner)?.ephemerals.delete(path);
    parent.children.delete(path.slice(parentPath.length === 1 ? 1 : parentPath.length + 1));
    parent.cversion++;
    parent.pzxid = ++this.zxid;
    this.fire(this.dataWatches, path, EVENT.DELETED);
    this.fire(this.childWatches, path, EVENT.DELETED);
    this.fire(this.childWatches, parentPath, EVENT.CHILDREN_CHANGED);
  }

  /**
   * Deletes every container that has had a child and is empty now, as ZooKeeper's
   * ContainerManager does on each check (a parent left empty goes on the next one).
   */
  private sweepContainers(): void {
    for (const [path, node] of [...this.nodes]) {
      const emptied = node.cversion > 0 && node.children.size === 0;
      if (node.ephemeralOwner === CONTAINER_OWNER && emptied) this.remove(path, -1);
    }
  }

  private existing(path: string, version: number): ZNode {
    const node = this.nodes.get(path);
    if (!node) throw ERR.NO_NODE;
    if (version !== -1 && version !== node.version) throw ERR.BAD_VERSION;
    return node;
  }

  /** A reconnected client re-arms its watches; what changed meanwhile fires at once. */
  private setWatches(r: JuteReader, connection: Connection): void {
    const since = r.long();
    const [data, exist, child] = [r.strings(), r.strings(), r.strings()];
    const notify = (path: string, type: number) => sendEvent(connection, type, path);
    for (const path of data) {
      const node = this.nodes.get(path);
      if (!node) notify(path, EVENT.DELETED);
      else if (node.mzxid > since) notify(path, EVENT.DATA_CHANGED);
      else watchOn(this.dataWatches, path, connection);
    }
    for (const path of exist) {
      if (this.nodes.has(path)) notify(path, EVENT.CREATED);
      else watchOn(this.dataWatches, path, connection);
    }
    for (const path of child) {
      const node = this.nodes.get(path);
      if (!node) notify(path, EVENT.DELETED);
      else if (node.pzxid > since) notify(path, EVENT.CHILDREN_CHANGED);
      else watchOn(this.childWatches, path, connection);
    }
  }

  private expire(session: Session): void {
    clearTimeout(session.expiry);
    this.sessions.delete(session.id);
    // Its own watches go with it (it is not told about its own nodes' deletion); it learns of
    // the expiry when it reconnects, as from a real ensemble.
    const connection = session.connection;
    if (connection) {
      for (const watchers of [...this.dataWatches.values(), ...this.childWatches.values()]) {
        watchers.delete(connection);
      }
    }
    for (const path of [...session.ephemerals]) {
      if (this.nodes.has(path)) this.remove(path, -1);
    }
  }

  /** One-shot watches: each connection watching `path` is told once, then forgotten. */
  private fire(watches: Map<string, Set<Connection>>, path: string, type: number): void {
    const watchers = watches.get(path);
    if (!watchers) return;
    watches.delete(path);
    for (const connection of watchers) sendEvent(connection, type, path);
  }
}

interface ZNode {
  data: Buffer | null;
  czxid: bigint;
  mzxid: bigint;
  pzxid: bigint;
  ctime: bigint;
  mtime: bigint;
  version: number;
  cversion: number;
  ephemeralOwner: bigint;
  children: Set<string>;
  acl: Acl[];
}

interface Acl {
  perms: number;
  scheme: string;
  id: string;
}

interface Session {
  id: bigint;
  passwd: Buffer;
  timeoutMs: number;
  ephemerals: Set<string>;
  /** Digest ids of the credentials it added (AUTH), for `auth` ACL entries. */
  auth: string[];
  connection?: Connection;
  expiry?: NodeJS.Timeout;
}

interface Connection {
  socket: Socket;
  session?: Session;
}

const OP = {
  CREATE: 1,
  DELETE: 2,
  EXISTS: 3,
  GET_DATA: 4,
  SET_DATA: 5,
  GET_ACL: 6,
  GET_CHILDREN: 8,
  PING: 11,
  GET_CHILDREN2: 12,
  MULTI: 14,
  CREATE2: 15,
  CREATE_CONTAINER: 19,
  AUTH: 100,
  SET_WATCHES: 101,
  CLOSE_SESSION: -11,
};
const ERR = {
  RUNTIME_INCONSISTENCY: -2,
  UNIMPLEMENTED: -6,
  BAD_ARGUMENTS: -8,
  NO_NODE: -101,
  BAD_VERSION: -103,
  NO_CHILDREN_FOR_EPHEMERALS: -108,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  INVALID_ACL: -114,
};
const EVENT = { CREATED: 1, DELETED: 2, DATA_CHANGED: 3, CHILDREN_CHANGED: 4 };
const FLAG = { EPHEMERAL: 1, SEQUENTIAL: 2, CONTAINER: 4 };
/** The ephemeralOwner of a container node (ZooKeeper's EphemeralType.CONTAINER_EPHEMERAL_OWNER). */
const CONTAINER_OWNER = -0x8000000000000000n; // Long.MIN_VALUE
const OPEN_ACL: Acl[] = [{ perms: 31, scheme: 'world', id: 'anyone' }];
const SYNC_CONNECTED = 3;
const XID_NOTIFICATION = -1;

/** A CreateRequest as read. */
interface Create {
  path: string;
  data: Buffer | null;
  acl: Acl[];
  flags: number;
}

/** Reads a CreateRequest of op `type`; throws BAD_ARGUMENTS or INVALID_ACL as the server does. */
function readCreate(r: JuteReader, session: Session, type: number): Create {
  const path = r.string();
  const data = r.buffer();
  const acl: Acl[] = [];
  for (let i = r.int(); i > 0; i--) {
    const [perms, scheme, id] = [r.int(), r.string(), r.string()];
    // `auth` (CREATOR_ALL_ACL) stands for the identities of the session, as ZooKeeper stores it.
    if (scheme !== 'auth') acl.push({ perms, scheme, id });
    else for (const own of session.auth) acl.push({ perms, scheme: 'digest', id: own });
  }
  const flags = r.int();
  // A container is created by createContainer only, and createContainer makes only containers.
  if ((flags === FLAG.CONTAINER) !== (type === OP.CREATE_CONTAINER)) throw ERR.BAD_ARGUMENTS;
  if (acl.length === 0) throw ERR.INVALID_ACL;
  return { path, data, acl, flags };
}

function newNode(zxid: bigint, data: Buffer | null, ephemeralOwner: bigint, acl: Acl[]): ZNode {
  const now = BigInt(Date.now());
  return {
    data,
    czxid: zxid,
    mzxid: zxid,
    pzxid: zxid,
    ctime: now,
    mtime: now,
    version: 0,
    cversion: 0,
    ephemeralOwner,
    children: new Set(),
    acl,
  };
}

/** The id ZooKeeper's digest provider stores for credentials "user:password". */
function digestId(credentials: string): string {
  const user = credentials.slice(0, credentials.indexOf(':'));
  return `${user}:${createHash('sha1').update(credentials).digest('base64')}`;
}

function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

function writeStat(w: JuteWriter, node: ZNode): JuteWriter {
  return w
    .long(node.czxid)
    .long(node.mzxid)
    .long(node.ctime)
    .long(node.mtime)
    .int(node.version)
    .int(node.cversion)
    .int(0)
    .long(node.ephemeralOwner)
    .int(node.data?.length ?? 0)
    .int(node.children.size)
    .long(node.pzxid);
}

function watchOn(watches: Map<string, Set<Connection>>, path: string, c: Connection): void {
  let watchers = watches.get(path);
  if (!watchers) watches.set(path, (watchers = new Set()));
  watchers.add(c);
}

function sendEvent(connection: Connection, type: number, path: string): void {
  if (connection.socket.destroyed) return;
  const header = new JuteWriter().int(XID_NOTIFICATION).long(-1n).int(0);
  connection.socket.write(
    concatFrame(header, new JuteWriter().int(type).int(SYNC_CONNECTED).string(path)),
  );
}

function concatFrame(header: JuteWriter, body: JuteWriter): Buffer {
  const a = header.frame();
  const b = body.frame();
  const out = Buffer.concat([a, b.subarray(4)]);
  out.writeInt32BE(out.length - 4, 0);
  return out;
}
