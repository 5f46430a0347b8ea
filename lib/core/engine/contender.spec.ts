import { fencingToken, fencingTokenText, MAX_GENERATION, ownNodes } from './contender';

describe('protected node names', () => {
  it('finds our node by its protected uuid prefix only', () => {
    const children = ['_c_abc-lock-0000000001', '_c_abcd-lock-0000000002'];
    expect(ownNodes(children, 'abcd')).toEqual(['_c_abcd-lock-0000000002']);
    expect(ownNodes(children, 'zzz')).toEqual([]);
  });
});

describe('fencing tokens', () => {
  it('fencing tokens grow with the generation, the sequence and across a re-created lock node', () => {
    const first = fencingToken(100n, 41);
    const handedOn = fencingToken(100n, 41, 1);
    const lastHandoff = fencingToken(100n, 41, MAX_GENERATION);
    const next = fencingToken(100n, 42);
    const afterRecreate = fencingToken(101n, 0);
    expect(handedOn > first).toBe(true);
    expect(next > lastHandoff).toBe(true);
    expect(afterRecreate > next).toBe(true);
    expect(fencingToken(100n, 2 ** 31 - 1, MAX_GENERATION) < fencingToken(101n, 0)).toBe(true);
    expect(() => fencingToken(100n, 41, MAX_GENERATION + 1)).toThrow(RangeError);
  });

  it('keeps tokens of ensemble zxids (epoch in the high bits) apart and ordered as text', () => {
    const epoch3 = (3n << 32n) | 17n;
    const big = fencingToken(epoch3, 2 ** 31 - 1, MAX_GENERATION);
    const bigger = fencingToken(epoch3 + 1n, 0);
    expect(big > 2n ** 64n).toBe(true);
    expect(bigger < 2n ** 128n).toBe(true);
    expect(fencingTokenText(big) < fencingTokenText(bigger)).toBe(true);
    expect(fencingTokenText(5n) < fencingTokenText(40n)).toBe(true);
    expect(fencingTokenText(big)).toHaveLength(39);
    expect(BigInt(fencingTokenText(big))).toBe(big);
  });
});
