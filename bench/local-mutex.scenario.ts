/**
 * local-mutex: same-key-1p's callers and critical section on an in-process async mutex (FIFO,
 * a promise chain; no ZooKeeper, no fencing). What an in-process handoff costs in JavaScript
 * alone, the yardstick for same-key-1p's handoffs inside one process.
 */
import type { ScenarioSize } from './bench.options';
import { checkIntervals, ExclusionMonitor } from './exclusion.monitor';
import { opLoopWorkload, Workload } from './workload.runner';

/** FIFO async mutex: each acquire waits for the previous holder's release. */
class LocalMutex {
  private tail: Promise<void> = Promise.resolve();

  async acquire(): Promise<() => void> {
    let release!: () => void;
    const previous = this.tail;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    return release;
  }
}

export function localMutexCallers(size: ScenarioSize): Workload {
  const mutex = new LocalMutex();
  const monitor = new ExclusionMonitor();
  let token = 0n;
  const op = async (): Promise<void> => {
    const release = await mutex.acquire();
    try {
      await monitor.critical('/local', ++token);
    } finally {
      release();
    }
  };
  return opLoopWorkload(size, op, () => ({
    counter: monitor.counterViolations,
    ...checkIntervals(monitor.intervals),
  }));
}
