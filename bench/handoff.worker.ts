/**
 * Process B of the handoff scenarios: it waits, and reports the monotonic time (process.hrtime,
 * shared by all processes of the machine) at which it was told.
 *   raw:  parent -> { type: 'arm', path }  B watches `path` (exists + watch), -> { type: 'armed' };
 *         when the parent deletes it: -> { type: 'got', ns } (the notification's arrival)
 *   lock: parent -> { type: 'arm', path }  B calls acquire(path), -> { type: 'armed' } at once;
 *         when granted: ns taken, lock released, -> { type: 'got', ns }
 */
import { ZkLockClient } from '../lib/core';
import { RawZkClient } from './raw-zk.client';

export interface HandoffConfig {
  connectionString: string;
  namespace: string;
  mode: 'raw' | 'lock';
}

export type ToHandoff = { type: 'arm'; path: string } | { type: 'close' };
export type FromHandoff =
  | { type: 'ready' }
  | { type: 'armed' }
  | { type: 'got'; ns: bigint }
  | { type: 'error'; message: string };

const send = (message: FromHandoff): void => void process.send?.(message);

async function main(): Promise<void> {
  const config = JSON.parse(process.env.BENCH_WORKER_CONFIG ?? '{}') as HandoffConfig;
  const raw =
    config.mode === 'raw' ? await RawZkClient.connect(config.connectionString) : undefined;
  const locks =
    config.mode === 'lock'
      ? await ZkLockClient.connect({
          connectionString: config.connectionString,
          namespace: config.namespace,
          sessionTimeoutMs: 10_000,
        })
      : undefined;
  const fail = (error: Error) => send({ type: 'error', message: error.stack ?? String(error) });
  process.on('message', (message: ToHandoff) => {
    if (message.type === 'close') {
      raw?.close();
      void (locks?.close() ?? Promise.resolve()).finally(() => process.disconnect());
      return;
    }
    if (raw) {
      raw.watchDeletion(message.path).then(({ notified }) => {
        send({ type: 'armed' });
        return notified.then((ns) => send({ type: 'got', ns }));
      }, fail);
      return;
    }
    const granted = locks!.acquire(message.path);
    send({ type: 'armed' });
    granted
      .then(async (lock) => {
        const ns = process.hrtime.bigint();
        await lock.release();
        send({ type: 'got', ns });
      })
      .catch(fail);
  });
  send({ type: 'ready' });
}

main().catch((error: Error) => {
  send({ type: 'error', message: error.stack ?? String(error) });
  process.exitCode = 1;
  process.disconnect?.();
});
