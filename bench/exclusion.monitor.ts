/**
 * Checks mutual exclusion while a lock scenario runs:
 * - in a process, a counter per path with an `await` inside the critical section: a second
 *   caller entering while the first is suspended is a violation;
 * - across processes, the critical sections' intervals on the system-wide monotonic clock
 *   (process.hrtime) must not overlap, and fencing tokens must grow from one holder to the next.
 * A section entered as a reader ('read') may overlap other readers, never a writer or an
 * exclusive holder; readers' tokens are not checked (a reader's token says which write it
 * follows, docs/recipes/read-write-lock.md).
 */

/** 'exclusive': the mutex; 'read' / 'write': the two sides of a read/write lock. */
export type SectionMode = 'exclusive' | 'read' | 'write';

export interface CriticalInterval {
  path: string;
  enterNs: bigint;
  exitNs: bigint;
  fencingToken: bigint;
  /** Default 'exclusive'. */
  mode?: SectionMode;
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
  private readonly inside = new Map<string, { readers: number; others: number }>();
  readonly intervals: CriticalInterval[] = [];
  counterViolations = 0;

  /** The critical section: counts callers inside `path` across an event-loop turn. */
  async critical(
    path: string,
    fencingToken: bigint,
    mode: SectionMode = 'exclusive',
  ): Promise<void> {
    const enterNs = process.hrtime.bigint();
    let now = this.inside.get(path);
    if (!now) this.inside.set(path, (now = { readers: 0, others: 0 }));
    const reader = mode === 'read';
    if (now.others > 0 || (!reader && now.readers > 0)) this.counterViolations++;
    if (reader) now.readers++;
    else now.others++;
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (reader) now.readers--;
    else now.others--;
    const interval: CriticalInterval = {
      path,
      enterNs,
      exitNs: process.hrtime.bigint(),
      fencingToken,
    };
    if (mode !== 'exclusive') interval.mode = mode;
    this.intervals.push(interval);
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
    let lastExit = -1n; // of any section
    let lastNonReaderExit = -1n;
    let lastToken: bigint | undefined; // of the previous writer or exclusive holder
    for (const section of list) {
      const reader = section.mode === 'read';
      if (section.enterNs < (reader ? lastNonReaderExit : lastExit)) overlaps++;
      if (section.exitNs > lastExit) lastExit = section.exitNs;
      if (reader) continue;
      if (section.exitNs > lastNonReaderExit) lastNonReaderExit = section.exitNs;
      if (lastToken !== undefined && section.fencingToken <= lastToken) tokenRegressions++;
      lastToken = section.fencingToken;
    }
  }
  return { overlaps, tokenRegressions };
}

export function totalViolations(counts: ViolationCounts): number {
  return counts.counter + counts.overlaps + counts.tokenRegressions;
}

/** What a worker process sends of its monitor: its counter's violations and its intervals. */
export interface MonitorSnapshot {
  counterViolations: number;
  intervals: CriticalInterval[];
}

export function snapshotOf(monitor: ExclusionMonitor): MonitorSnapshot {
  return { counterViolations: monitor.counterViolations, intervals: monitor.intervals };
}

/** The violations of several processes' monitors together (overlaps across processes too). */
export function mergedViolations(snapshots: readonly MonitorSnapshot[]): {
  violations: number;
  detail: ViolationCounts;
} {
  const intervals = snapshots.flatMap((s) => s.intervals);
  const counter = snapshots.reduce((sum, s) => sum + s.counterViolations, 0);
  const detail = { counter, ...checkIntervals(intervals) };
  return { violations: totalViolations(detail), detail };
}
