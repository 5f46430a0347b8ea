import { blocksFor, blocksOf, measureInTurn } from './in-turn.runner';
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

describe('measureInTurn', () => {
  it('warms both up, then alternates blocks, each round starting one row later; each row adds up its own', async () => {
    const { counts, counter } = fakeServer();
    const log: string[] = [];
    const raw = fakeWorkload('raw', log, counts);
    const lock = fakeWorkload('lock', log, counts);
    const [rawRow, lockRow] = await measureInTurn(
      [
        { scenario: 'raw-cycle', workload: raw, opsPerCaller: 11 },
        { scenario: 'uncontended', workload: lock, opsPerCaller: 11 },
      ],
      counter,
    );
    // The second round starts with the other row.
    expect(log).toEqual(['raw warm-up', 'lock warm-up', 'raw 5', 'lock 5', 'lock 6', 'raw 6']);
    // Two blocks of 2 ms each over 11 ops.
    expect(rawRow).toMatchObject({ scenario: 'raw-cycle', ops: 11, clientCpuUsPerOp: 363.64 });
    // One mntr per row is left in the count, as in a single run: (33 + 1) / 11.
    expect(lockRow).toMatchObject({ zkRequestsPerOp: 3.09, zkPacketsSentPerOp: 3.27 });
    // The last block's count: a workload's violations cover all its runs.
    expect(lockRow.violations).toBe(11);
  });

  it('takes three rows in turn, as many blocks each, set by the smallest row', async () => {
    const { counts, counter } = fakeServer();
    const log: string[] = [];
    const rows = await measureInTurn(
      [
        {
          scenario: 'raw-parallel-4s',
          workload: fakeWorkload('raw', log, counts),
          opsPerCaller: 10,
        },
        { scenario: 'many-keys-4s', workload: fakeWorkload('4s', log, counts), opsPerCaller: 10 },
        { scenario: 'many-keys', workload: fakeWorkload('default', log, counts), opsPerCaller: 20 },
      ],
      counter,
    );
    expect(log).toEqual([
      'raw warm-up',
      '4s warm-up',
      'default warm-up',
      'raw 5',
      '4s 5',
      'default 10',
      '4s 5', // each round starts one row later
      'default 10',
      'raw 5',
    ]);
    expect(rows.map((row) => [row.scenario, row.ops, row.violations])).toEqual([
      ['raw-parallel-4s', 10, 10],
      ['many-keys-4s', 10, 10],
      ['many-keys', 20, 20],
    ]);
    // Each row its own ops and one mntr: (30 + 1) / 10, (60 + 1) / 20.
    expect(rows.map((row) => row.zkRequestsPerOp)).toEqual([3.1, 3.1, 3.05]);
    expect(rows.map((row) => row.zkPacketsSentPerOp)).toEqual([3.3, 3.3, 3.15]);
  });

  it('keeps blocks of at least 5 ops per caller, 10 at most (40 for one caller)', () => {
    expect(blocksFor(100, 32)).toBe(10);
    expect(blocksFor(49, 32)).toBe(9);
    // The 32-caller rows with --quick: 10 ops per caller.
    expect(blocksFor(10, 32)).toBe(2);
    expect(blocksFor(9, 32)).toBe(1);
    expect(blocksFor(3, 32)).toBe(1);
    // raw-cycle and uncontended: 2,000 ops (--quick 200) in 40 blocks.
    expect(blocksFor(2000, 1)).toBe(40);
    expect(blocksFor(200, 1)).toBe(40);
    expect(blocksFor(100, 1)).toBe(20);
  });

  it('gives a group the fewest blocks any of its rows allows', () => {
    const row = (callers: number, opsPerCaller: number) => ({
      scenario: 'raw-cycle' as const,
      workload: { callers } as Workload,
      opsPerCaller,
    });
    expect(blocksOf([row(1, 2000), row(1, 2000)])).toBe(40);
    // A one-caller row with a 32-caller row: the 32-caller row's 10.
    expect(blocksOf([row(1, 2000), row(32, 100)])).toBe(10);
    expect(blocksOf([row(32, 100), row(32, 10)])).toBe(2);
  });
});
