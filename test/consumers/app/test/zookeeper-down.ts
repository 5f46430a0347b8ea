/**
 * Imported before the app's module by app-e2e.consumer-spec.ts: the address AppModule reads
 * (ZK_CONNECT) becomes one where no ZooKeeper listens, as on a laptop where it is not running.
 */
export const productionZooKeeper = process.env.ZK_CONNECT;
process.env.ZK_CONNECT = '127.0.0.1:9';
