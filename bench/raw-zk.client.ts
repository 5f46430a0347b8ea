/**
 * A thin promise adapter over node-zookeeper-client for the raw baselines: the protocol's own
 * cost, with no lock logic. Bench tooling only; lib/ has its own adapter.
 */
// node-zookeeper-client ships no types and @types/node-zookeeper-client is incomplete.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const zookeeper = require('node-zookeeper-client');

type Callback<T> = (error: Error | null, value: T) => void;

interface NativeClient {
  connect(): void;
  close(): void;
  once(event: 'connected' | 'expired' | 'disconnected', listener: () => void): void;
  create(path: string, data: Buffer, mode: number, callback: Callback<string>): void;
  getChildren(path: string, callback: Callback<string[]>): void;
  remove(path: string, version: number, callback: Callback<void>): void;
  removeRecursive(path: string, version: number, callback: Callback<void>): void;
  mkdirp(path: string, callback: Callback<string>): void;
  exists(path: string, watcher: (event: unknown) => void, callback: Callback<unknown>): void;
}

export const EPHEMERAL_SEQUENTIAL: number = zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL;
export const PERSISTENT: number = zookeeper.CreateMode.PERSISTENT;

function call<T>(run: (callback: Callback<T>) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    run((error, value) => (error ? reject(error) : resolve(value))),
  );
}

export class RawZkClient {
  private constructor(private readonly client: NativeClient) {}

  static connect(connectionString: string, sessionTimeoutMs = 30_000): Promise<RawZkClient> {
    const client: NativeClient = zookeeper.createClient(connectionString, {
      sessionTimeout: sessionTimeoutMs,
      spinDelay: 100,
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        client.close();
        reject(new Error(`ZooKeeper at "${connectionString}" gave no session within 10000 ms`));
      }, 10_000);
      client.once('connected', () => {
        clearTimeout(timer);
        resolve(new RawZkClient(client));
      });
      client.connect();
    });
  }

  create(path: string, data: Buffer, mode: number): Promise<string> {
    return call((cb) => this.client.create(path, data, mode, cb));
  }

  getChildren(path: string): Promise<string[]> {
    return call((cb) => this.client.getChildren(path, cb));
  }

  remove(path: string): Promise<void> {
    return call((cb) => this.client.remove(path, -1, cb));
  }

  removeRecursive(path: string): Promise<void> {
    return call((cb) => this.client.removeRecursive(path, -1, cb));
  }

  mkdirp(path: string): Promise<string> {
    return call((cb) => this.client.mkdirp(path, cb));
  }

  /**
   * Sets a watch on `path` (which must exist); resolves once the server has it, with a promise
   * of the monotonic time (ns) at which this process was told of the node's deletion.
   */
  async watchDeletion(path: string): Promise<{ notified: Promise<bigint> }> {
    let tell!: (ns: bigint) => void;
    const notified = new Promise<bigint>((resolve) => (tell = resolve));
    const stat = await call<unknown>((cb) =>
      this.client.exists(path, () => tell(process.hrtime.bigint()), cb),
    );
    if (!stat) throw new Error(`watchDeletion: ${path} does not exist`);
    return { notified };
  }

  close(): void {
    this.client.close();
  }
}
