import { parseBenchArgs, sizeOf } from './bench.options';

describe('parseBenchArgs', () => {
  it('reads --quick, --only and --out', () => {
    expect(parseBenchArgs(['--quick', '--only', 'many-keys', '--out', 'r.jsonl'])).toEqual({
      quick: true,
      help: false,
      only: 'many-keys',
      out: 'r.jsonl',
      peers: false,
    });
  });

  it('reads --peers (Curator and kazoo in the same run)', () => {
    expect(parseBenchArgs(['--quick', '--peers'])).toMatchObject({ quick: true, peers: true });
  });

  it("reads --sessions, one of the raw-parallel rows' sessions, and leaves it out by default", () => {
    expect(parseBenchArgs(['--only', 'many-keys', '--sessions', '4'])).toMatchObject({
      only: 'many-keys',
      sessions: 4,
    });
    expect(parseBenchArgs([]).sessions).toBeUndefined();
    expect(() => parseBenchArgs(['--sessions', '3'])).toThrow(/--sessions 3: use one of 1, 2, 4/);
    expect(() => parseBenchArgs(['--sessions', 'two'])).toThrow(/use one of 1, 2, 4/);
    expect(() => parseBenchArgs(['--sessions'])).toThrow(/--sessions needs a value/);
  });

  it('rejects an unknown scenario and names the valid ones', () => {
    expect(() => parseBenchArgs(['--only', 'nope'])).toThrow(
      /Unknown scenario "nope": use one of raw-cycle/,
    );
  });

  it('rejects a flag without its value and an unknown flag', () => {
    expect(() => parseBenchArgs(['--out'])).toThrow(/--out needs a value/);
    expect(() => parseBenchArgs(['--fast'])).toThrow(/Unknown argument "--fast"/);
  });
});

describe('sizeOf', () => {
  it('keeps the callers of a scenario and shortens a quick run', () => {
    const full = sizeOf('same-key-1p', false);
    const quick = sizeOf('same-key-1p', true);
    expect(quick.callers).toBe(full.callers);
    expect(quick.opsPerCaller).toBeLessThan(full.opsPerCaller);
  });

  it('pairs each baseline with its lock scenario at the same concurrency', () => {
    expect(sizeOf('raw-cycle', false).callers).toBe(sizeOf('uncontended', false).callers);
    expect(sizeOf('raw-parallel', false).callers).toBe(sizeOf('many-keys', false).callers);
  });
});
