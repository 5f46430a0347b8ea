import type { ZooKeeperServer } from './zookeeper';

/**
 * For a test file with a ZooKeeper of its own: after each failed test, prints the end of every
 * member's server.log to stderr, while it is still there (stopping the server removes its data
 * dir, and the log with it). Call it in the describe block that starts the server.
 */
export function printServerLogOnFailure(server: () => ZooKeeperServer | undefined): void {
  afterEach(({ task }) => {
    if (task.result?.state === 'fail') server()?.printLogTails(`test "${task.name}" failed`);
  });
}
