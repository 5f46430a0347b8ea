import { ZooKeeperServer } from './zookeeper';

/**
 * Starts one standalone ZooKeeper for the whole run unless ZK_CONNECT names one; the test
 * processes inherit ZK_CONNECT. Returns the teardown that stops it.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  if (process.env.ZK_CONNECT) return async () => {};
  const server = await ZooKeeperServer.start();
  process.env.ZK_CONNECT = server.connectionString;
  return () => server.stop();
}
