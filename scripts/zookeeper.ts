/**
 * `npm run zookeeper [-- --size 3]`: runs a local ZooKeeper (standalone or loopback ensemble)
 * in the foreground, prints ZK_CONNECT, and stops it on Ctrl-C.
 */
import { ZooKeeperServer } from '../test/support/zookeeper';

async function main(): Promise<void> {
  const sizeArg = process.argv.indexOf('--size');
  const size = sizeArg > 0 ? Number(process.argv[sizeArg + 1]) : 1;
  const server = await ZooKeeperServer.start({ size });
  process.stdout.write(`ZK_CONNECT=${server.connectionString}\n`);
  if (size > 1) {
    for (const member of server.members) {
      process.stdout.write(
        `member ${member.id}: 127.0.0.1:${member.clientPort} (${await member.mode()}, pid ${member.pid})\n`,
      );
    }
  }
  const stop = async (): Promise<void> => {
    await server.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : err}\n`);
  process.exit(1);
});
