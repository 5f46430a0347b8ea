import { FENCE_LIMIT, FENCE_TEXT_WIDTH, fenceDecimal, fenceText } from './fence-column';

describe('fence column encoding', () => {
  const tokens = [
    0n,
    1n,
    9n,
    10n,
    (1n << 32n) | 5n,
    (1n << 63n) - 1n,
    1n << 63n,
    1n << 64n,
    (5n << 96n) | 7n,
    (5n << 96n) | 8n,
    FENCE_LIMIT - 1n,
  ];

  it('writes a token in decimal, and zero-padded to a fixed width for text columns', () => {
    expect(fenceDecimal(1n << 64n)).toBe('18446744073709551616');
    expect(fenceText(0n)).toBe('0'.repeat(FENCE_TEXT_WIDTH));
    expect(fenceText(42n)).toBe('42'.padStart(40, '0'));
    expect(fenceText(FENCE_LIMIT - 1n)).toBe('0340282366920938463463374607431768211455');
    for (const token of tokens) {
      expect(fenceText(token)).toHaveLength(FENCE_TEXT_WIDTH);
      expect(BigInt(fenceText(token))).toBe(token);
    }
  });

  it('orders the padded text exactly as the tokens, where unpadded decimal would not', () => {
    const shuffled = [...tokens].reverse();
    const byText = [...shuffled].sort((a, b) => compare(fenceText(a), fenceText(b)));
    expect(byText).toEqual(tokens);
    expect(compare(String(9n), String(10n))).toBe(1); // why the padding is needed
  });

  it('refuses negative tokens and tokens of 2^128 and above', () => {
    expect(() => fenceText(-1n)).toThrow(RangeError);
    expect(() => fenceDecimal(FENCE_LIMIT)).toThrow(/outside \[0, 2\^128\)/);
  });
});

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
