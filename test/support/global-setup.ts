import { ZooKeeperServer } from './zookeeper';

/** Starts one standalone ZooKeeper for the whole run unless ZK_CONNECT names one. */
export default async function globalSetup(): Promise<void> {
  if (process.env.ZK_CONNECT) return;
  const server = await ZooKeeperServer.start();
  process.env.ZK_CONNECT = server.connectionString;
  (globalThis as any).__ZK_SERVER__ = server;
}
