/**
 * A TCP proxy whose faults a seeded schedule drives (test/core/wire-faults.e2e-spec.ts): resets a
 * connection in the middle of a chunk (a frame cut where the schedule says), delays what it
 * forwards, stalls one direction (buffered, then let through), refuses new connections.
 */
import { AddressInfo, Server, Socket, connect, createServer } from 'node:net';

export type Direction = 'up' | 'down';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Chunks not forwarded yet (delayed or stalled), in order: TCP never reorders. */
  queued: Record<Direction, Array<{ chunk: Buffer; dueAt: number }>>;
  timers: Record<Direction, NodeJS.Timeout | undefined>;
}

export class FaultProxy {
  private readonly pairs = new Set<Pair>();
  private refusing = false;
  private delayMs = 0;
  private readonly stalled: Record<Direction, boolean> = { up: false, down: false };
  /** The next chunk (either direction) is cut after this fraction of its bytes, then reset. */
  private cutAt?: number;

  private constructor(
    private readonly server: Server,
    private readonly targetPort: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(targetPort: number): Promise<FaultProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new FaultProxy(server, targetPort);
  }

  get connectionString(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resets the connection carrying the next chunk after `fraction` (0-1) of its bytes. */
  resetMidFrame(fraction: number): void {
    this.cutAt = fraction;
  }

  delay(ms: number): void {
    this.delayMs = ms;
  }

  stall(direction: Direction): void {
    this.stalled[direction] = true;
  }

  refuse(on: boolean): void {
    this.refusing = on;
  }

  /** Every fault off; what was stalled goes through now. */
  heal(): void {
    this.refusing = false;
    this.delayMs = 0;
    this.cutAt = undefined;
    for (const direction of ['up', 'down'] as const) {
      this.stalled[direction] = false;
      for (const pair of this.pairs) {
        for (const entry of pair.queued[direction]) entry.dueAt = 0;
        this.pump(pair, direction);
      }
    }
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) this.drop(pair);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.refusing) return void client.destroy();
    const upstream = connect(this.targetPort, '127.0.0.1');
    const pair: Pair = {
      client,
      upstream,
      queued: { up: [], down: [] },
      timers: { up: undefined, down: undefined },
    };
    this.pairs.add(pair);
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on('error', () => undefined);
      socket.on('close', () => this.drop(pair));
    }
    client.on('data', (chunk: Buffer) => this.forward(pair, 'up', chunk));
    upstream.on('data', (chunk: Buffer) => this.forward(pair, 'down', chunk));
  }

  private forward(pair: Pair, direction: Direction, chunk: Buffer): void {
    // A cut only where nothing is queued in that direction: the bytes before it keep their order.
    if (this.cutAt !== undefined && pair.queued[direction].length === 0) {
      const keep = Math.floor(chunk.length * this.cutAt);
      this.cutAt = undefined;
      this.send(pair, direction, chunk.subarray(0, keep));
      // The bytes kept reach the other side before the reset does.
      setImmediate(() => this.drop(pair));
      return;
    }
    pair.queued[direction].push({ chunk, dueAt: Date.now() + this.delayMs });
    this.pump(pair, direction);
  }

  /** Forwards the queued chunks that are due, in order, unless the direction is stalled. */
  private pump(pair: Pair, direction: Direction): void {
    clearTimeout(pair.timers[direction]);
    pair.timers[direction] = undefined;
    if (this.stalled[direction] || !this.pairs.has(pair)) return;
    const queue = pair.queued[direction];
    while (queue.length > 0 && queue[0].dueAt <= Date.now()) {
      this.send(pair, direction, queue.shift()!.chunk);
    }
    if (queue.length > 0) {
      const wait = queue[0].dueAt - Date.now();
      pair.timers[direction] = setTimeout(() => this.pump(pair, direction), wait);
    }
  }

  private send(pair: Pair, direction: Direction, chunk: Buffer): void {
    const to = direction === 'up' ? pair.upstream : pair.client;
    if (!to.destroyed && chunk.length > 0) to.write(chunk);
  }

  private drop(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    clearTimeout(pair.timers.up);
    clearTimeout(pair.timers.down);
    pair.client.destroy();
    pair.upstream.destroy();
  }
}
