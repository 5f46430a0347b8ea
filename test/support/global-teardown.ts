import type { ZooKeeperServer } from './zookeeper';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as any).__ZK_SERVER__ as ZooKeeperServer | undefined;
  if (server) await server.stop();
}
