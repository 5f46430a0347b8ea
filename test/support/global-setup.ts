import { fourLetterWord, ZooKeeperServer } from './zookeeper';

/**
 * Starts one standalone ZooKeeper for the whole run unless ZK_CONNECT names one; the test
 * processes inherit ZK_CONNECT, and ZK_SHARED_PID and ZK_SHARED_DATADIR, which
 * shared-server-guard.ts checks around every file: the shared server is never stopped, paused
 * or restarted (a file that does that to a server starts its own). Returns the teardown, which
 * fails the run when the shared server did not live to see it.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  if (process.env.ZK_CONNECT) return async () => {};
  const server = await ZooKeeperServer.start();
  const [member] = server.members;
  const conf = await fourLetterWord(member.clientPort, 'conf', 5000);
  process.env.ZK_CONNECT = server.connectionString;
  process.env.ZK_SHARED_PID = String(member.pid);
  process.env.ZK_SHARED_DATADIR = /^dataDir=(.*)$/m.exec(conf)?.[1] ?? '';
  return async () => {
    const alive = member.running;
    await server.stop();
    if (!alive) {
      throw new Error(
        `the run's shared ZooKeeper (${server.connectionString}) exited during the run: a test ` +
          'file that stops, kills or restarts a server must start its own (CONTRIBUTING.md ' +
          '"Rules for tests")',
      );
    }
  };
}
