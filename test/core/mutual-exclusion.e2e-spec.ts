/**
 * 4 OS processes x 8 concurrent callers take one lock and do a read-modify-write
 * of a shared counter file with an await in the middle. Without mutual exclusion updates get lost
 * and the enter/exit log shows overlapping critical sections.
 */
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTestRoot } from './support/core-fixture';
import { readCriticalSections } from './support/critical-log';
import { runCycleWorkers, scratchDir } from './support/workers';

const PROCESSES = 4;
const CALLERS = 8;
const CYCLES = 4;

describe('mutual exclusion across processes', () => {
  const zk = useTestRoot('mutex');
  const scratch = scratchDir();

  afterAll(() => scratch.remove());

  // sessions 4: each process keeps 4 sessions (the path uses one of them).
  it.each([1, 4])(
    '4 processes x 8 callers: exact final count and no overlapping critical sections (sessions: %i)',
    async (sessions) => {
      const counterFile = join(scratch.dir, `counter-${sessions}`);
      const logFile = join(scratch.dir, `sections-${sessions}.log`);
      writeFileSync(counterFile, '0');
      writeFileSync(logFile, '');

      await runCycleWorkers({
        sessions,
        path: `${zk.root}/counter-${sessions}`,
        processes: PROCESSES,
        callers: CALLERS,
        cycles: CYCLES,
        logFile,
        counterFile,
        maxSleepMs: 3,
      });

      const total = PROCESSES * CALLERS * CYCLES;
      expect(Number(readFileSync(counterFile, 'utf8'))).toBe(total);
      const sections = readCriticalSections(logFile); // throws on any overlap
      expect(sections).toHaveLength(total);
      expect(new Set(sections.map((s) => s.who.split(':')[0])).size).toBe(PROCESSES);
      for (let i = 1; i < sections.length; i++) {
        expect(sections[i].enteredAt).toBeGreaterThanOrEqual(sections[i - 1].exitedAt);
      }
    },
  );
});
