import { FencedRegister, RegisterWrite } from './fenced-register';
import { ofKind, registerViolations, tenureViolations } from './leadership-detector';

const write = (participant: string, token: bigint, believedLeader = true): RegisterWrite => ({
  participant,
  token,
  kind: 'work',
  believedLeader,
  sentAt: 0,
});

const run = (...writes: RegisterWrite[]) => {
  const register = new FencedRegister();
  writes.forEach((w) => register.write(w));
  return register;
};

describe('the fenced register', () => {
  it('accepts a token at least the highest it accepted, refuses an older one, records both', () => {
    const register = run(write('a', 5n), write('a', 5n), write('b', 7n), write('a', 5n));
    expect(register.log.map((e) => e.accepted)).toEqual([true, true, true, false]);
    expect(register.writers()).toEqual(['a', 'b']);
  });
});

describe('the leadership detector', () => {
  it('finds nothing in a clean hand-over, nor in a deposed leader that knew it was deposed', () => {
    const register = run(write('a', 5n), write('b', 7n), write('a', 5n, false), write('a', 9n));
    expect(registerViolations(register.log)).toEqual([]);
  });

  it('flags a refused write whose writer still believed it led (two believers)', () => {
    const register = run(write('a', 5n), write('b', 7n), write('a', 5n));
    expect(ofKind(registerViolations(register.log), 'stale-believer')).toHaveLength(1);
  });

  it('flags two participants accepted under one token, and their interleaving', () => {
    const register = run(write('a', 5n), write('b', 5n), write('a', 5n));
    const found = registerViolations(register.log);
    expect(ofKind(found, 'token-shared')).toHaveLength(1);
    expect(ofKind(found, 'interleaved')).toHaveLength(1);
  });

  it('flags a token that went down among accepted writes (an unfenced log)', () => {
    const log = [write('a', 7n), write('b', 5n)].map((w, seq) => ({
      ...w,
      seq,
      at: seq,
      accepted: true,
    }));
    expect(ofKind(registerViolations(log), 'token-went-down')).toHaveLength(1);
  });

  it('flags tenures of two participants that overlap in time, not ones that follow each other', () => {
    const a = { participant: 'a', token: 1n, from: 0, to: 10 };
    expect(tenureViolations([a, { participant: 'b', token: 2n, from: 10 }], 20)).toEqual([]);
    expect(tenureViolations([a, { participant: 'b', token: 2n, from: 9 }], 20)).toHaveLength(1);
    expect(
      tenureViolations(
        [
          { ...a, to: undefined },
          { participant: 'b', token: 2n, from: 15 },
        ],
        20,
      ),
    ).toHaveLength(1);
  });

  it('flags a leader granted a token not above the one granted before it', () => {
    const a = { participant: 'a', token: 7n, from: 0, to: 10 };
    const found = tenureViolations([a, { participant: 'b', token: 7n, from: 11 }], 20);
    expect(found.map((v) => v.kind)).toEqual(['token-not-greater']);
  });
});
