import { blocksFor, measurePair } from './paired.runner';
import type { ZkRequestCounter } from './zk-requests.counter';
import type { Workload } from './workload.runner';

/** A server whose every `mntr` counts itself (1 received, 3 sent) and each op 3 and 3. */
function fakeServer() {
  const counts = { received: 0, sent: 0 };
  const counter = {
    async snapshot() {
      counts.received += 1;
      counts.sent += 3;
      return { ...counts };
    },
    async around<T>(work: () => Promise<T>) {
      const before = await this.snapshot();
      const value = await work();
      const after = await this.snapshot();
      const packets = {
        received: after.received - before.received,
        sent: after.sent - before.sent,
      };
      return { value, packets };
    },
  };
  return { counts, counter: counter as unknown as ZkRequestCounter };
}

function fakeWorkload(name: string, log: string[], counts: { received: number; sent: number }) {
  let ran = 0;
  const workload: Workload = {
    callers: 1,
    processes: 1,
    async warmup() {
      log.push(`${name} warm-up`);
    },
    async run(opsPerCaller = 0) {
      log.push(`${name} ${opsPerCaller}`);
      counts.received += 3 * opsPerCaller;
      counts.sent += 3 * opsPerCaller;
      ran += opsPerCaller;
      return { latenciesMs: Array(opsPerCaller).fill(1), violations: ran, clientCpuMs: 2 };
    },
  };
  return workload;
}

describe('measurePair', () => {
  it('warms both up, then alternates blocks; each row adds up its own', async () => {
    const { counts, counter } = fakeServer();
    const log: string[] = [];
    const raw = fakeWorkload('raw', log, counts);
    const lock = fakeWorkload('lock', log, counts);
    const [rawRow, lockRow] = await measurePair(
      [
        { scenario: 'raw-cycle', workload: raw, opsPerCaller: 45 },
        { scenario: 'uncontended', workload: lock, opsPerCaller: 45 },
      ],
      counter,
    );
    expect(log).toEqual(['raw warm-up', 'lock warm-up', 'raw 22', 'lock 22', 'raw 23', 'lock 23']);
    expect(rawRow).toMatchObject({ scenario: 'raw-cycle', ops: 45, clientCpuUsPerOp: 88.89 });
    // One mntr per row is left in the count, as in a single run: (135 + 1) / 45.
    expect(lockRow).toMatchObject({ zkRequestsPerOp: 3.02, zkPacketsSentPerOp: 3.07 });
    // The last block's count: a workload's violations cover all its runs.
    expect(lockRow.violations).toBe(45);
  });

  it('keeps blocks of at least 20 ops per caller, 10 at most', () => {
    expect(blocksFor(2000)).toBe(10);
    expect(blocksFor(200)).toBe(10);
    expect(blocksFor(45)).toBe(2);
    expect(blocksFor(5)).toBe(1);
  });
});
