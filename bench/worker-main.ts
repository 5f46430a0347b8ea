/** The start of a bench worker process: its config, its client, and telling the parent it failed. */
import { ZkLockClient } from '../lib/core';

/** Sends `message` to the parent process (over IPC). */
export function sendToParent(message: object): void {
  process.send?.(message);
}

/** Tells the parent the worker failed (WorkerHandle fails it with the message). */
export function sendError(error: Error): void {
  sendToParent({ type: 'error', message: error.stack ?? String(error) });
}

/**
 * Runs `main` with the config the parent passed (WorkerHandle.fork: BENCH_WORKER_CONFIG) and the
 * worker's ZkLockClient, one per process as an instance of a service has; a failure goes to the
 * parent, sets the exit code and closes the channel.
 */
export function startWorker<T extends { connectionString: string; namespace: string }>(
  main: (config: T, client: ZkLockClient) => Promise<void>,
): void {
  const config = JSON.parse(process.env.BENCH_WORKER_CONFIG ?? '{}') as T;
  ZkLockClient.connect({
    connectionString: config.connectionString,
    namespace: config.namespace,
    sessionTimeoutMs: 10_000,
  })
    .then((client) => main(config, client))
    .catch((error: Error) => {
      sendError(error);
      process.exitCode = 1;
      process.disconnect?.();
    });
}
