/**
 * The other participant of the leader scenarios (leader.scenario.ts), in its own process with
 * its own session, reporting on the monotonic clock all processes share:
 *   follow: parent -> { type: 'follow', path }  joins the election, -> { type: 'armed' } once
 *           joined; when it leads: ns taken, leaves, -> { type: 'got', ns }
 *   lead:   parent -> { type: 'lead', path }  joins and waits to lead, -> { type: 'leading' };
 *           the parent then kills this process (SIGKILL: a crash)
 */
import { ZkLockClient } from '../lib/core';

export interface LeaderWorkerConfig {
  connectionString: string;
  namespace: string;
  sessionTimeoutMs: number;
}

export type ToLeaderWorker = { type: 'follow'; path: string } | { type: 'lead'; path: string };
export type FromLeaderWorker =
  | { type: 'ready' }
  | { type: 'armed' }
  | { type: 'leading' }
  | { type: 'got'; ns: bigint }
  | { type: 'error'; message: string };

const send = (message: FromLeaderWorker): void => void process.send?.(message);

async function main(): Promise<void> {
  const config = JSON.parse(process.env.BENCH_WORKER_CONFIG ?? '{}') as LeaderWorkerConfig;
  const locks = await ZkLockClient.connect(config);
  const fail = (error: Error) => send({ type: 'error', message: error.stack ?? String(error) });
  process.on('message', (message: ToLeaderWorker | { type: 'close' }) => {
    if (message.type === 'close') {
      void locks.close().finally(() => process.disconnect());
      return;
    }
    const election = locks.election(message.path, { participantId: `worker-${process.pid}` });
    if (message.type === 'lead') {
      election.whenLeader().then(() => send({ type: 'leading' }), fail);
      return;
    }
    election.once('isLeader', () => {
      const ns = process.hrtime.bigint();
      void election.close().then(() => send({ type: 'got', ns }), fail);
    });
    election.start().then(() => send({ type: 'armed' }), fail);
  });
  send({ type: 'ready' });
}

main().catch((error: Error) => {
  send({ type: 'error', message: error.stack ?? String(error) });
  process.exitCode = 1;
  process.disconnect?.();
});
