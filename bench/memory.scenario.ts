/**
 * memory-10k: a client process takes and releases 10,000 distinct lock paths
 * once each (32 callers), lets its path cleanup run, collects garbage, and compares its heap
 * with the heap before (after a 2,000-cycle warm-up). The process is the soak suite's worker
 * (test/core/fixtures/soak-worker.ts), so the bench and `npm run test:soak` measure one thing.
 */
import { join } from 'node:path';
import type { ScenarioResult } from './bench.types';
import { round } from './latency.stats';
import { WorkerHandle } from './worker-process.handle';
import type { ZkRequestCounter } from './zk-requests.counter';

type FromSoak =
  | { type: 'ready'; heapBefore: number }
  | {
      type: 'result';
      cycles: number;
      elapsedMs: number;
      badTokens: number;
      heapBefore: number;
      heapAfter: number;
    }
  | { type: 'error'; message: string };

const WORKER = join(__dirname, '..', 'test', 'core', 'fixtures', 'soak-worker.ts');

export async function measureMemory(
  connectionString: string,
  namespace: string,
  paths: number,
  counter: ZkRequestCounter,
): Promise<ScenarioResult> {
  const env = {
    ZK_CONNECT: connectionString,
    NAMESPACE: namespace,
    PATHS: String(paths),
    CYCLES: String(paths),
    CONCURRENCY: '32',
    OFFSET: '0',
  };
  const worker = WorkerHandle.fork<FromSoak, { type: 'go' }>(WORKER, {}, env);
  try {
    await worker.next('ready');
    const before = await counter.snapshot();
    worker.send({ type: 'go' });
    const done = await worker.next('result');
    const after = await counter.snapshot();
    const perOp = (n: number) => round(n / done.cycles, 2);
    return {
      scenario: 'memory-10k',
      ops: done.cycles,
      callers: 32,
      processes: 1,
      durationMs: done.elapsedMs,
      opsPerSec: round((done.cycles * 1000) / done.elapsedMs, 1),
      p50Ms: 0,
      p99Ms: 0,
      violations: done.badTokens,
      zkRequestsPerOp: perOp(after.received - before.received),
      zkPacketsSentPerOp: perOp(after.sent - before.sent),
      heap: { beforeBytes: done.heapBefore, afterBytes: done.heapAfter },
    };
  } finally {
    await worker.close();
  }
}
