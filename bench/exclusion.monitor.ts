/**
 * Checks mutual exclusion while a lock scenario runs:
 * - in a process, a counter per path with an `await` inside the critical section: a second
 *   caller entering while the first is suspended is a violation;
 * - across processes, the critical sections' intervals on the system-wide monotonic clock
 *   (process.hrtime) must not overlap, and fencing tokens must grow from one holder to the next.
 */

export interface CriticalInterval {
  path: string;
  enterNs: bigint;
  exitNs: bigint;
  fencingToken: bigint;
}

export interface ViolationCounts {
  /** A caller entered while another caller of the same process was inside. */
  counter: number;
  /** Two intervals on one path overlapped (any process). */
  overlaps: number;
  /** A holder's fencing token was not greater than the previous holder's. */
  tokenRegressions: number;
}

export class ExclusionMonitor {
  private readonly inside = new Map<string, number>();
  readonly intervals: CriticalInterval[] = [];
  counterViolations = 0;

  /** The critical section: counts callers inside `path` across an event-loop turn. */
  async critical(path: string, fencingToken: bigint): Promise<void> {
    const enterNs = process.hrtime.bigint();
    const before = this.inside.get(path) ?? 0;
    if (before !== 0) this.counterViolations++;
    this.inside.set(path, before + 1);
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.inside.set(path, (this.inside.get(path) ?? 1) - 1);
    this.intervals.push({ path, enterNs, exitNs: process.hrtime.bigint(), fencingToken });
  }
}

/** Overlaps and token regressions among intervals from any number of processes. */
export function checkIntervals(
  intervals: readonly CriticalInterval[],
): Omit<ViolationCounts, 'counter'> {
  const byPath = new Map<string, CriticalInterval[]>();
  for (const interval of intervals) {
    const list = byPath.get(interval.path) ?? [];
    list.push(interval);
    byPath.set(interval.path, list);
  }
  let overlaps = 0;
  let tokenRegressions = 0;
  for (const list of byPath.values()) {
    list.sort((a, b) => (a.enterNs < b.enterNs ? -1 : a.enterNs > b.enterNs ? 1 : 0));
    let lastExit = -1n;
    for (let i = 0; i < list.length; i++) {
      if (list[i].enterNs < lastExit) overlaps++;
      if (list[i].exitNs > lastExit) lastExit = list[i].exitNs;
      if (i > 0 && list[i].fencingToken <= list[i - 1].fencingToken) tokenRegressions++;
    }
  }
  return { overlaps, tokenRegressions };
}

export function totalViolations(counts: ViolationCounts): number {
  return counts.counter + counts.overlaps + counts.tokenRegressions;
}
