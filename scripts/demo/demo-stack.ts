/**
 * Everything the demo and the e2e tests run: a ZooKeeper (unless ZK_CONNECT names one), a shared
 * store (a fresh SQLite file, or PostgreSQL) and N sample-app instances as separate processes.
 * `stop()` stops everything it started, in reverse order.
 */
import { join } from 'node:path';
import { PostgresServer } from '../../test/support/postgres';
import { ZooKeeperServer } from '../../test/support/zookeeper';
import { AppInstance } from './app-instance';
import { chooseZooKeeper, EmbeddedZooKeeper, embeddedNotice } from './zookeeper-choice';

export type StoreKind = 'sqlite' | 'postgres';

export interface DemoStackOptions {
  /** Folder for the instances' logs and the SQLite file. */
  dir: string;
  store: StoreKind;
  /** A running PostgreSQL to use instead of starting one (postgres://...). */
  postgresUrl?: string;
  /** A running ZooKeeper to use instead of starting one. */
  zkConnect?: string;
  /** Run on the embedded in-memory server even where a real ZooKeeper is installed. */
  embeddedZooKeeper?: boolean;
  instances?: number;
  /** Extra environment of every instance (STOCK_IO_DELAY_MS, ZK_SESSION_TIMEOUT_MS...). */
  env?: Record<string, string>;
  onStep?: (message: string) => void;
}

export class DemoStack {
  readonly instances: AppInstance[] = [];
  private zooKeeper?: ZooKeeperServer | EmbeddedZooKeeper;
  private postgres?: PostgresServer;
  zkConnect = '';
  databaseUrl = '';

  private constructor(private readonly options: DemoStackOptions) {}

  static async start(options: DemoStackOptions): Promise<DemoStack> {
    const stack = new DemoStack(options);
    try {
      await stack.startAll();
    } catch (err) {
      await stack.stop();
      throw err;
    }
    return stack;
  }

  get urls(): string[] {
    return this.instances.map((i) => i.url);
  }

  /** Environment shared by every instance: same ZooKeeper, same store. */
  get env(): Record<string, string> {
    return { ZK_CONNECT: this.zkConnect, DATABASE_URL: this.databaseUrl, ...this.options.env };
  }

  /** Stops instance `index` and starts it again on the same port with extra environment. */
  async restartInstance(index: number, env: Record<string, string>): Promise<AppInstance> {
    const old = this.instances[index];
    await old.stop();
    const fresh = await AppInstance.start({
      name: old.name,
      port: old.port,
      env: { ...this.env, ...env },
      logFile: join(this.options.dir, `${old.name}.log`),
    });
    this.instances[index] = fresh;
    return fresh;
  }

  async stop(): Promise<void> {
    const errors: unknown[] = [];
    const attempt = (p: Promise<void>) => p.catch((err) => void errors.push(err));
    await Promise.all(this.instances.map((i) => attempt(i.stop())));
    if (this.postgres) await attempt(this.postgres.stop());
    if (this.zooKeeper) await attempt(this.zooKeeper.stop());
    if (errors.length) throw errors[0];
  }

  private async startAll(): Promise<void> {
    const { dir, store, onStep = () => undefined } = this.options;
    const zooKeeper = chooseZooKeeper({
      zkConnect: this.options.zkConnect,
      embedded: this.options.embeddedZooKeeper,
    });
    if (zooKeeper.kind === 'given') {
      this.zkConnect = zooKeeper.connectionString;
    } else {
      onStep(
        zooKeeper.kind === 'installed' ? 'starting ZooKeeper' : embeddedNotice(zooKeeper.reason),
      );
      this.zooKeeper =
        zooKeeper.kind === 'installed'
          ? await ZooKeeperServer.start()
          : await EmbeddedZooKeeper.start();
      this.zkConnect = this.zooKeeper.connectionString;
    }
    if (store === 'sqlite') {
      this.databaseUrl = `sqlite:${join(dir, 'inventory.sqlite')}`;
    } else if (this.options.postgresUrl) {
      this.databaseUrl = this.options.postgresUrl;
    } else {
      onStep('starting PostgreSQL');
      this.postgres = await PostgresServer.start();
      this.databaseUrl = this.postgres.connectionString;
    }
    const count = this.options.instances ?? 3;
    onStep(`starting ${count} sample-app instances`);
    const names = Array.from({ length: count }, (_, i) => `app-${String.fromCharCode(65 + i)}`);
    const started = await Promise.allSettled(
      names.map((name) =>
        AppInstance.start({ name, env: this.env, logFile: join(dir, `${name}.log`) }),
      ),
    );
    for (const result of started)
      if (result.status === 'fulfilled') this.instances.push(result.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }
}
