/**
 * Rows measured in turn in one process (the groups of IN_TURN in bench/run.order.ts): every
 * row's warm-up, then a block of each row in turn, and so on. On a shared machine the load
 * drifts between rows run one after the other by more than a target's margin; blocks spread
 * that drift over all of them. Each row adds up its own blocks into a ScenarioResult.
 */
import type { ScenarioName, ScenarioResult } from './bench.types';
import type { ServerCpuMeter } from './cpu.meter';
import type { PacketCounts, ZkRequestCounter } from './zk-requests.counter';
import { measureRun, MeasuredRun, scenarioResult, Workload } from './workload.runner';

export interface InTurnRow {
  scenario: ScenarioName;
  /** A workload whose run(opsPerCaller) runs that many ops per caller (raw or lock loops). */
  workload: Workload;
  /** The row's measured ops per caller, split over the blocks. */
  opsPerCaller: number;
}

/** Blocks per row, at most (rows of several callers). */
const BLOCKS = 10;

/**
 * Blocks per row, at most, for rows of one caller (raw-cycle and uncontended): their op is under
 * a millisecond, so 10 blocks of 200 ops last ~150 ms each, long enough for the shared machine's
 * load to change within one. In 40 blocks of 50 ops, six runs of `--only uncontended` read
 * 1.00-1.06 x raw-cycle, against 0.96-1.09 in 10 blocks (bench/README.md, "The uncontended row").
 */
const ONE_CALLER_BLOCKS = 40;

/**
 * The fewest ops per caller in a block. A block of many callers starts with all of them sending
 * at once and ends with those done waiting for the last: about an op per caller at each end off
 * the steady rate. From 5 ops per caller on, that edge is a small part of a block and the same in
 * every row of a group (the 32-caller rows: 10 blocks of 10 ops per caller, --quick 2 of 5).
 * raw-cycle and uncontended (1 caller, 2,000 ops, --quick 200) get 40 blocks either way.
 */
export const MIN_BLOCK_OPS_PER_CALLER = 5;

/** Blocks for a row of `callers` x `opsPerCaller`: the most, fewer to keep MIN_BLOCK_OPS_PER_CALLER. */
export function blocksFor(opsPerCaller: number, callers: number): number {
  const most = Math.floor(opsPerCaller / MIN_BLOCK_OPS_PER_CALLER);
  return Math.max(1, Math.min(callers === 1 ? ONE_CALLER_BLOCKS : BLOCKS, most));
}

/** The blocks of each row of a group: as many for all, the fewest any of its rows allows. */
export function blocksOf(rows: readonly InTurnRow[]): number {
  return Math.min(...rows.map((row) => blocksFor(row.opsPerCaller, row.workload.callers)));
}

/**
 * Two rows or more, one result each. Each round of blocks starts one row later than the last
 * (A B, B A, A B... ; A B C, B C A, C A B...): a block's leftovers (garbage, timers) fall on the
 * next block, and no row always comes right after the same one.
 */
export async function measureInTurn(
  rows: readonly InTurnRow[],
  counter: ZkRequestCounter,
  serverCpu?: ServerCpuMeter,
): Promise<ScenarioResult[]> {
  for (const { workload } of rows) await workload.warmup();
  // What one `mntr` snapshot adds to the servers' own counts (1 request, 3 packets sent on 3.8).
  const { packets: snapshot } = await counter.around(() => Promise.resolve());
  const blocks = blocksOf(rows);
  const runs: MeasuredRun[][] = rows.map(() => []);
  for (let b = 0; b < blocks; b++) {
    for (let turn = 0; turn < rows.length; turn++) {
      const i = (b + turn) % rows.length;
      const { workload, opsPerCaller } = rows[i];
      const ops = shareOf(opsPerCaller, blocks, b);
      runs[i].push(await measureRun(workload, counter, serverCpu, ops));
    }
  }
  return rows.map((row, i) => scenarioResult(row.scenario, row.workload, addUp(runs[i], snapshot)));
}

/** Block b's ops: the blocks differ by one op at most and add up to `total`. */
function shareOf(total: number, blocks: number, b: number): number {
  return Math.floor((total * (b + 1)) / blocks) - Math.floor((total * b) / blocks);
}

/**
 * A row's blocks as one run. Each block's packets include one `mntr` snapshot: the row keeps
 * one, as a single run does. Violations are the last block's: a lock workload's monitor spans
 * its warm-up and every block, so its last check covers them all.
 */
function addUp(runs: readonly MeasuredRun[], snapshot: PacketCounts): MeasuredRun {
  const extra = runs.length - 1;
  const { violations, detail } = runs[runs.length - 1].outcome;
  const total = (of: (run: MeasuredRun) => number) => runs.reduce((sum, run) => sum + of(run), 0);
  // A CPU figure only when every block has one.
  const cpu = (of: (run: MeasuredRun) => number | undefined) =>
    runs.every((run) => of(run) !== undefined) ? total((run) => of(run) ?? 0) : undefined;
  return {
    outcome: {
      latenciesMs: runs.flatMap((run) => run.outcome.latenciesMs),
      violations,
      detail,
      clientCpuMs: cpu((run) => run.outcome.clientCpuMs),
    },
    durationMs: total((run) => run.durationMs),
    packets: {
      received: total((run) => run.packets.received) - extra * snapshot.received,
      sent: total((run) => run.packets.sent) - extra * snapshot.sent,
    },
    serverCpuMs: cpu((run) => run.serverCpuMs),
  };
}
