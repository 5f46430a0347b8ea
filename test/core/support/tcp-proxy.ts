/**
 * A TCP proxy on 127.0.0.1 in front of one ZooKeeper server, for tests that cut one client off
 * while the server and every other client go on: block() drops the client's connections and
 * refuses new ones (the client sees a disconnect, its session lives on the server until it
 * expires), unblock() lets it reconnect.
 */
import { createServer, Server, Socket, connect } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private blocked = false;

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
    for (const socket of this.sockets) socket.destroy();
  }

  unblock(): void {
    this.blocked = false;
  }

  close(): Promise<void> {
    this.block();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.blocked) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
