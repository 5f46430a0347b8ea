/**
 * The lock family's scenarios, in one process on one ZkLockClient, 32 callers:
 * rw-read-heavy (90 % reads) and rw-write-only on one path, semaphore-4 (4 leases), and
 * multi-3 (each op locks 3 paths of 8, in the order the caller names them). Each op is acquire,
 * the monitored critical section, release. The monitor counts, with an await inside:
 * - rw: a writer entering beside anyone, or a reader beside a writer; writer tokens must grow;
 * - semaphore: more than maxLeases callers inside at once;
 * - multi: any member path entered twice at once (ExclusionMonitor per path).
 */
import type { LockHandle, ZkLockClient } from '../lib/core';
import type { ScenarioSize } from './bench.options';
import { ExclusionMonitor, checkIntervals } from './exclusion.monitor';
import { opLoopWorkload, Workload } from './workload.runner';
import { rwMode } from './lock-callers.runner';

export type FamilyScenario = 'rw-read-heavy' | 'rw-write-only' | 'semaphore-4' | 'multi-3';

const LEASES = 4;
const MULTI_POOL = 8;
const MULTI_SIZE = 3;

/** Counts who is inside: writers alone, readers together, at most `limit` holders. */
class SharedMonitor {
  private readers = 0;
  private writers = 0;
  private lastWriteToken = -1n;
  violations = 0;

  async critical(mode: 'read' | 'write' | 'lease', token: bigint, limit = Infinity): Promise<void> {
    if (mode === 'write') {
      if (this.readers + this.writers > 0) this.violations++;
      if (token <= this.lastWriteToken) this.violations++;
      this.lastWriteToken = token;
      this.writers++;
    } else {
      if (this.writers > 0 || this.readers + 1 > limit) this.violations++;
      this.readers++;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (mode === 'write') this.writers--;
    else this.readers--;
  }
}

/** One op of a family scenario, timed by the caller's loop. */
type Op = (caller: number, n: number) => Promise<void>;

export function familyCallers(
  client: ZkLockClient,
  scenario: FamilyScenario,
  path: string,
  size: ScenarioSize,
): Workload {
  const shared = new SharedMonitor();
  const perPath = new ExclusionMonitor();
  const op = familyOp(client, scenario, path, shared, perPath);
  return opLoopWorkload(size, op, () => ({
    counter: shared.violations + perPath.counterViolations,
    ...checkIntervals(perPath.intervals),
  }));
}

function familyOp(
  client: ZkLockClient,
  scenario: FamilyScenario,
  path: string,
  shared: SharedMonitor,
  perPath: ExclusionMonitor,
): Op {
  const held = async (lock: LockHandle, inside: () => Promise<void>): Promise<void> => {
    try {
      await inside();
    } finally {
      await lock.release();
    }
  };
  switch (scenario) {
    case 'rw-read-heavy':
    case 'rw-write-only': {
      const modeOf = rwMode(scenario);
      return async (caller, n) => {
        const write = modeOf(caller, n) === 'write';
        const lock = await (write ? client.writeLock(path) : client.readLock(path)).acquire();
        await held(lock, () => shared.critical(write ? 'write' : 'read', lock.fencingToken));
      };
    }
    case 'semaphore-4': {
      const semaphore = client.semaphore(path, { maxLeases: LEASES });
      return async () => {
        const lease = await semaphore.acquire();
        try {
          await shared.critical('lease', 0n, LEASES);
        } finally {
          await lease.release();
        }
      };
    }
    case 'multi-3':
      return async (caller, n) => {
        // Overlapping sets named in different orders; the lock takes them in one order.
        const first = (caller * 3 + n) % MULTI_POOL;
        const members = Array.from(
          { length: MULTI_SIZE },
          (_, k) => `${path}/p${(first + (caller % 2 === 0 ? k : MULTI_SIZE - k)) % MULTI_POOL}`,
        );
        const multi = await client.acquireAll(members);
        try {
          await Promise.all(multi.paths.map((p, k) => perPath.critical(p, multi.fencingTokens[k])));
        } finally {
          await multi.release();
        }
      };
  }
}
