/**
 * Fencing tokens grow strictly from one holder to the next, over 1,000+ handoffs
 * between processes, also when the lock node (the parent of the queue nodes) is removed when
 * empty and created again (parentCleanupDelayMs 0 in some rounds).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTestRoot } from './support/core-fixture';
import { readCriticalSections } from './support/critical-log';
import { runCycleRounds, scratchDir, type CycleRound } from './support/workers';
import { eventually } from './support/zk-admin';

/** Rounds alternate between immediate cleanup of the empty lock node and the default delay. */
const ROUNDS: CycleRound[] = [
  { parentCleanupDelayMs: 0, callers: 1, cycles: 68, gapMs: 3 },
  { parentCleanupDelayMs: undefined, callers: 2, cycles: 34, gapMs: 0 },
  { parentCleanupDelayMs: 0, callers: 1, cycles: 68, gapMs: 3 },
  { parentCleanupDelayMs: 5, callers: 2, cycles: 34, gapMs: 2 },
  { parentCleanupDelayMs: 0, callers: 1, cycles: 68, gapMs: 3 },
];

describe('fencing tokens across processes', () => {
  const zk = useTestRoot('fencing');
  const path = `${zk.root}/fenced`;
  const scratch = scratchDir();

  afterAll(() => scratch.remove());

  it('strictly increase over 1,000 handoffs, across removal and re-creation of the lock node', async () => {
    const logFile = join(scratch.dir, 'tokens.log');
    writeFileSync(logFile, '');
    let removals = 0;
    // The same 3 processes run every round, each round on new clients with its options.
    await runCycleRounds({ path, logFile, maxSleepMs: 0, processes: 3 }, ROUNDS, async (round) => {
      if (round.parentCleanupDelayMs === 0) {
        // Every worker has released: the empty lock node must go, so the next round re-creates it.
        await eventually(
          'the empty lock node is removed',
          async () => !(await zk.admin.exists(path)),
        );
        removals++;
      }
    });

    const sections = readCriticalSections(logFile);
    const handoffs = sections.length - 1;
    expect(handoffs).toBeGreaterThanOrEqual(1_000);
    expect(removals).toBe(3);
    const pidOf = (who: string): string => who.split(':')[0];
    const crossProcess = sections.filter(
      (s, i) => i > 0 && pidOf(s.who) !== pidOf(sections[i - 1].who),
    );
    expect(crossProcess.length).toBeGreaterThanOrEqual(100);
    const decreases = sections.filter((s, i) => i > 0 && s.token <= sections[i - 1].token);
    expect(decreases.map((s) => `${s.who} got ${s.token}`)).toEqual([]);
  });
});
