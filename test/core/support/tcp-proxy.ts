/**
 * A TCP proxy on 127.0.0.1 in front of one ZooKeeper server, for tests that cut one client off
 * while the server and every other client go on: block() drops the client's connections and
 * refuses new ones (the client sees a disconnect, its session lives on the server until it
 * expires), unblock() lets it reconnect. holdRequests() keeps the connections up but holds what
 * clients send (the server answers nothing, the socket stays live) until releaseRequests().
 * dropRequests() discards what clients send (one-way loss: the server still sends, e.g. watch
 * notifications) until passRequests(). For a client with several sessions (one connection each),
 * cut() and holdRequestsOf() act on one connection, named by the client's local port, and
 * acceptOnly() lets only the first connections through. cutNextFrameAfter() resets a connection
 * in the middle of the next frame the server sends (a reply cut mid-frame). cutAtRequest() resets
 * the connection that carries a client's next request of a given kind, which never reaches the
 * server (written by the client, lost with its connection). holdAtRequest() holds a client's next
 * request of a given kind, and what its connection sends after it, until releaseRequests().
 */
import { createServer, Server, Socket, connect } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  /** The proxy's own connections to the server, among `sockets`. */
  private readonly upstreams = new WeakSet<Socket>();
  private blocked = false;
  private holding = false;
  private muted = false;
  private dropping = false;
  /** Client sockets whose requests are held (holdRequestsOf), by their remote (client) port. */
  private readonly holdingPorts = new Set<number>();
  /** How many more connections to accept (acceptOnly); unlimited when undefined. */
  private acceptsLeft?: number;
  /** Frames held per upstream socket, in order. */
  private readonly held = new Map<Socket, Buffer[]>();
  /** Op codes of the requests held now (a ZooKeeper RequestHeader's type: getData is 4). */
  readonly heldOps: number[] = [];
  /** How many bytes of the next frame from the server pass before its connection is reset. */
  private cutAfter?: { bytes: number; frameBytes?: number; done: () => void };
  /** The next request of this op code is not passed on: its connection is reset (cutAtRequest). */
  private cutAtOp?: { op: number; done: () => void };
  /** The next request of this op code, and its connection's after it, are held (holdAtRequest). */
  private holdAtOp?: { op: number; done: () => void };
  /** Called with each request's op code right after it was passed on (create is 1). */
  afterRequest?: (op: number) => void;
  /** Client connections open through the proxy now. */
  get connections(): number {
    return this.sockets.size / 2;
  }

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static start(targetPort: number): Promise<TcpProxy> {
    return new Promise((resolve, reject) => {
      const server = createServer();
      const proxy = new TcpProxy(server, 0);
      server.on('connection', (client) => proxy.accept(client, targetPort));
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        const port = typeof address === 'object' && address ? address.port : 0;
        (proxy as { port: number }).port = port;
        resolve(proxy);
      });
    });
  }

  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  block(): void {
    this.blocked = true;
    for (const socket of this.sockets) if (!this.upstreams.has(socket)) socket.destroy();
  }

  unblock(): void {
    this.blocked = false;
  }

  /** Drops what the server sends from now on (until unmuteReplies): replies get lost. */
  muteReplies(): void {
    this.muted = true;
  }

  unmuteReplies(): void {
    this.muted = false;
  }

  dropRequests(): void {
    this.dropping = true;
  }

  passRequests(): void {
    this.dropping = false;
  }

  holdRequests(): void {
    this.holding = true;
  }

  /** Holds what the client connection from local port `clientPort` sends (one session's). */
  holdRequestsOf(clientPort: number): void {
    this.holdingPorts.add(clientPort);
  }

  /** Drops the client connection from local port `clientPort` (that client may reconnect). */
  cut(clientPort: number): void {
    for (const socket of this.sockets) if (socket.remotePort === clientPort) socket.destroy();
  }

  /** From now on, lets `count` more connections through and refuses every one after them. */
  acceptOnly(count: number): void {
    this.acceptsLeft = count;
  }

  /**
   * Passes the first `bytes` bytes of the next frame the server sends to a client (a reply, a
   * ping reply, a notification; with `frameBytes`, the next one of that many bytes, length
   * included), then resets that client's connection (TCP RST) and drops the server side.
   * Resolves once done. The server keeps the session; the client reconnects.
   */
  cutNextFrameAfter(bytes: number, frameBytes?: number): Promise<void> {
    return new Promise((done) => (this.cutAfter = { bytes, frameBytes, done }));
  }

  /**
   * The next request of op code `op` a client sends (CLOSE_SESSION is -11) never reaches the
   * server: that client's connection is reset (TCP RST) instead, the server side dropped.
   * Resolves once done. The server keeps the session; the client may connect again.
   */
  cutAtRequest(op: number): Promise<void> {
    return new Promise((done) => (this.cutAtOp = { op, done }));
  }

  /**
   * The next request of op code `op` a client sends, and whatever its connection sends after it,
   * are held (the connection stays up, the server reads none of it) until releaseRequests().
   * Resolves once that request is held.
   */
  holdAtRequest(op: number): Promise<void> {
    return new Promise((done) => (this.holdAtOp = { op, done }));
  }

  releaseRequests(): void {
    this.holding = false;
    this.holdingPorts.clear();
    this.heldOps.length = 0;
    for (const [upstream, frames] of this.held) for (const frame of frames) upstream.write(frame);
    this.held.clear();
  }

  close(): Promise<void> {
    this.block();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.blocked || this.acceptsLeft === 0) return void client.destroy();
    if (this.acceptsLeft !== undefined) this.acceptsLeft--;
    const clientPort = client.remotePort;
    const upstream = connect(targetPort, '127.0.0.1');
    this.upstreams.add(upstream);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        // What the proxy passed on reaches the server, then a FIN: destroying the socket could
        // drop bytes still in its buffer, or reset a server that has not read them yet.
        if (upstream.destroyed) return;
        upstream.end();
        setTimeout(() => upstream.destroy(), 2000).unref();
      });
    }
    // Server to client as it comes, frame boundaries tracked only to cut one (cutNextFrameAfter).
    let frameLeft = 0; // bytes of the current frame still to come (its length read)
    let lengthBytes = Buffer.alloc(0); // the next frame's length, while it is split
    let cutLeft: number | undefined; // bytes still to pass before the reset
    upstream.on('data', (chunk) => {
      if (this.muted) return;
      if (cutLeft !== undefined) return void passThenReset(chunk);
      for (let at = 0; at < chunk.length;) {
        if (frameLeft > 0) {
          const taken = Math.min(frameLeft, chunk.length - at);
          frameLeft -= taken;
          at += taken;
          continue;
        }
        if (lengthBytes.length === 0 && this.cutAfter && cutsFrameAt(this.cutAfter, chunk, at)) {
          const cut = this.cutAfter;
          this.cutAfter = undefined;
          client.write(chunk.subarray(0, at));
          cutLeft = cut.bytes;
          client.once('close', cut.done);
          return void passThenReset(chunk.subarray(at));
        }
        const taken = Math.min(4 - lengthBytes.length, chunk.length - at);
        lengthBytes = Buffer.concat([lengthBytes, chunk.subarray(at, at + taken)]);
        at += taken;
        if (lengthBytes.length === 4) {
          frameLeft = lengthBytes.readInt32BE(0);
          lengthBytes = Buffer.alloc(0);
        }
      }
      client.write(chunk);
    });
    const passThenReset = (chunk: Buffer): void => {
      const passed = chunk.subarray(0, cutLeft);
      cutLeft! -= passed.length;
      if (cutLeft! > 0) return void client.write(passed);
      client.write(passed, () => {
        client.resetAndDestroy();
        upstream.destroy();
      });
    };
    // Client to server frame by frame (an int32 length, then the record), so they can be held.
    let pending = Buffer.alloc(0);
    let handshake = true; // a connection's first frame is the ConnectRequest, without a header
    client.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const frame = pending.subarray(0, 4 + pending.readInt32BE(0));
        pending = pending.subarray(frame.length);
        const cut = this.cutAtOp;
        if (!handshake && cut?.op === frame.readInt32BE(8)) {
          this.cutAtOp = undefined;
          pending = Buffer.alloc(0);
          client.once('close', cut.done);
          client.resetAndDestroy();
          return void upstream.destroy();
        }
        const hold = this.holdAtOp;
        if (!handshake && hold?.op === frame.readInt32BE(8)) {
          this.holdAtOp = undefined;
          this.holdingPorts.add(clientPort!);
          hold.done();
        }
        if (this.dropping) {
          // lost on the way: the server never reads it
        } else if (!this.holding && !this.holdingPorts.has(clientPort!)) {
          upstream.write(frame);
          if (!handshake) this.afterRequest?.(frame.readInt32BE(8));
        } else {
          if (!handshake) this.heldOps.push(frame.readInt32BE(8));
          this.held.set(upstream, [...(this.held.get(upstream) ?? []), frame]);
        }
        handshake = false;
      }
    });
  }
}

/** Whether the frame starting at `at` is the one to cut (its length read whole, when asked). */
function cutsFrameAt(cut: { frameBytes?: number }, chunk: Buffer, at: number): boolean {
  if (cut.frameBytes === undefined) return true;
  return at + 4 <= chunk.length && chunk.readInt32BE(at) + 4 === cut.frameBytes;
}
