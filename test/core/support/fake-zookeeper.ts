/**
 * A tiny fake ZooKeeper speaking just enough of the jute wire protocol for node-zookeeper-client
 * 1.1.3: every frame is an int32 length then the record. The first frame of a connection is a
 * ConnectRequest (protocolVersion, lastZxidSeen, timeOut, sessionId, passwd), answered with a
 * ConnectResponse (protocolVersion 0, timeOut, sessionId, passwd). Later frames start with a
 * RequestHeader (xid, type) and get a bare ReplyHeader (xid, zxid, err): pings (xid -2) and
 * closeSession succeed, the first other request gets `firstReplyErr`, later ones NO_NODE (an
 * empty tree). Used to send what a real ZooKeeper will not send on demand.
 */
import { randomBytes } from 'node:crypto';
import { AddressInfo, Server, Socket, createServer } from 'node:net';

const XID_PING = -2;
const OP_CLOSE_SESSION = -11;
const NO_NODE = -101;

export interface Handshake {
  /** Hex session id the client asked to resume ('0' for a new session). */
  requested: string;
  /** Hex session id granted ('0': unknown session, answered as expired). */
  granted: string;
}

export interface AnsweredRequest {
  /** 1 for the first accepted connection, 2 for the second, ... */
  connection: number;
  xid: number;
  type: number;
  err: number;
}

export class FakeZooKeeper {
  readonly handshakes: Handshake[] = [];
  /** Every request but pings, with the error code it was answered with. */
  readonly requests: AnsweredRequest[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Map<string, Buffer>();
  private zxid = 0n;

  private constructor(
    private readonly server: Server,
    private firstReplyErr: number | undefined,
    /** Answers every request of these types with this error code (e.g. each create). */
    private readonly errByType: Record<number, number> = {},
  ) {
    let connections = 0;
    server.on('connection', (socket) => this.serve(socket, ++connections));
  }

  /** Listens on 127.0.0.1 (a free port); the first request is answered with `firstReplyErr`. */
  static async start(
    firstReplyErr: number | undefined,
    errByType: Record<number, number> = {},
  ): Promise<FakeZooKeeper> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new FakeZooKeeper(server, firstReplyErr, errByType);
  }

  get connectionString(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Stops listening and drops every connection still open. */
  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket, connection: number): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined); // the client may drop the connection at any time
    let pending = Buffer.alloc(0);
    let handshaken = false;
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(4, 4 + pending.readInt32BE(0));
        pending = pending.subarray(4 + frame.length);
        if (handshaken) this.answer(socket, connection, frame);
        else this.handshake(socket, frame);
        handshaken = true; // the first frame of a connection is always the ConnectRequest
      }
    });
  }

  private handshake(socket: Socket, frame: Buffer): void {
    const timeOut = frame.readInt32BE(12); // after protocolVersion (4) and lastZxidSeen (8)
    const requested = frame.readBigUInt64BE(16);
    const passwd = frame.subarray(28, 28 + frame.readInt32BE(24));
    let granted = requested === 0n ? BigInt(`0x1${randomBytes(6).toString('hex')}`) : requested;
    let grantedPasswd = requested === 0n ? randomBytes(16) : passwd;
    if (requested === 0n) this.sessions.set(granted.toString(16), grantedPasswd);
    else if (!this.sessions.get(granted.toString(16))?.equals(passwd)) {
      granted = 0n; // unknown session: timeOut 0 means expired
      grantedPasswd = Buffer.alloc(16);
    }
    this.handshakes.push({ requested: requested.toString(16), granted: granted.toString(16) });
    const response = Buffer.alloc(40);
    response.writeInt32BE(36, 0);
    response.writeInt32BE(0, 4); // protocolVersion
    response.writeInt32BE(granted === 0n ? 0 : timeOut, 8);
    response.writeBigUInt64BE(granted, 12);
    response.writeInt32BE(16, 20);
    grantedPasswd.copy(response, 24);
    socket.write(response);
  }

  private answer(socket: Socket, connection: number, frame: Buffer): void {
    const xid = frame.readInt32BE(0);
    const type = frame.readInt32BE(4);
    let err = 0;
    if (xid !== XID_PING && type !== OP_CLOSE_SESSION) {
      err = this.firstReplyErr ?? this.errByType[type] ?? NO_NODE;
      this.firstReplyErr = undefined;
    }
    if (xid !== XID_PING) this.requests.push({ connection, xid, type, err });
    const reply = Buffer.alloc(20);
    reply.writeInt32BE(16, 0);
    reply.writeInt32BE(xid, 4);
    reply.writeBigUInt64BE(++this.zxid, 8);
    reply.writeInt32BE(err, 16);
    socket.write(reply);
    if (type === OP_CLOSE_SESSION) socket.end();
  }
}
