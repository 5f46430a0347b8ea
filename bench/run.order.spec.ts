import { rawParallelWith, SESSIONS_OF } from './bench.types';
import { IN_TURN, inTurnGroups, runOrder, selectedRows, stepsOf } from './run.order';

/** The raw-parallel row with as many sessions as the default client (raw-parallel-4s at 4). */
const DEFAULTS_RAW = rawParallelWith(SESSIONS_OF['many-keys']!);

describe('stepsOf', () => {
  it('groups each raw-parallel row with the many-keys rows of as many sessions', () => {
    const many = (raw: string) => (raw === DEFAULTS_RAW ? ['many-keys', 'curator-many-keys'] : []);
    expect(IN_TURN).toEqual([
      ['raw-cycle', 'uncontended'],
      ['raw-parallel', 'many-keys-1s', ...many('raw-parallel')],
      ['raw-parallel-2s', 'many-keys-2s', ...many('raw-parallel-2s')],
      ['raw-parallel-4s', 'many-keys-4s', ...many('raw-parallel-4s')],
    ]);
  });

  it('runs every group as one step in a full run, the other rows alone, all in run order', () => {
    const steps = stepsOf(selectedRows(undefined, true));
    expect(steps.flat()).toEqual(runOrder());
    expect(steps.filter((step) => step.length > 1)).toEqual(IN_TURN);
  });

  it("runs Curator's many-keys in turn with ours with --peers only", () => {
    expect(selectedRows()).not.toContain('curator-many-keys');
    expect(stepsOf(selectedRows('many-keys', true))).toEqual([
      [DEFAULTS_RAW, 'many-keys', 'curator-many-keys'],
    ]);
    expect(stepsOf(selectedRows('curator-many-keys', true))).toEqual([
      [DEFAULTS_RAW, 'curator-many-keys'],
    ]);
  });

  it('runs --only X in turn with its baseline when they share a group', () => {
    expect(stepsOf(selectedRows('many-keys'))).toEqual([[DEFAULTS_RAW, 'many-keys']]);
    expect(stepsOf(selectedRows('many-keys-2s'))).toEqual([['raw-parallel-2s', 'many-keys-2s']]);
    expect(stepsOf(selectedRows('uncontended'))).toEqual([['raw-cycle', 'uncontended']]);
  });

  it('runs many-keys at --sessions n in turn with raw-parallel over n sessions, Curator with it', () => {
    expect(stepsOf(selectedRows('many-keys', true, 4), 4)).toEqual([
      ['raw-parallel-4s', 'many-keys', 'curator-many-keys'],
    ]);
    expect(stepsOf(selectedRows('many-keys', false, 2), 2)).toEqual([
      ['raw-parallel-2s', 'many-keys'],
    ]);
    const groups = inTurnGroups(4);
    expect(groups.find((group) => group.includes('many-keys'))).toEqual([
      'raw-parallel-4s',
      'many-keys-4s',
      'many-keys',
      'curator-many-keys',
    ]);
    expect(stepsOf(selectedRows(undefined, true, 4), 4).flat()).toEqual(runOrder(4));
  });

  it('runs a row alone when no other row of its group is selected', () => {
    expect(stepsOf(selectedRows('raw-parallel-4s'))).toEqual([['raw-parallel-4s']]);
    expect(stepsOf(selectedRows('same-key-1p'))).toEqual([['raw-cycle'], ['same-key-1p']]);
    expect(stepsOf(['many-keys-4s'])).toEqual([['many-keys-4s']]);
  });
});
