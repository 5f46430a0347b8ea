import {
  checkIntervals,
  CriticalInterval,
  ExclusionMonitor,
  totalViolations,
} from './exclusion.monitor';

const interval = (
  path: string,
  enter: number,
  exit: number,
  token: number,
  mode?: 'read' | 'write',
): CriticalInterval => ({
  path,
  enterNs: BigInt(enter),
  exitNs: BigInt(exit),
  fencingToken: BigInt(token),
  ...(mode ? { mode } : {}),
});

describe('ExclusionMonitor', () => {
  it('counts a second caller entering a path while the first is suspended inside', async () => {
    const monitor = new ExclusionMonitor();
    await Promise.all([monitor.critical('/a', 1n), monitor.critical('/a', 2n)]);
    expect(monitor.counterViolations).toBe(1);
  });

  it('counts nothing for callers inside different paths or one after the other', async () => {
    const monitor = new ExclusionMonitor();
    await Promise.all([monitor.critical('/a', 1n), monitor.critical('/b', 1n)]);
    await monitor.critical('/a', 2n);
    expect(monitor.counterViolations).toBe(0);
    expect(monitor.intervals).toHaveLength(3);
  });

  it('lets readers in together but counts a writer beside a reader, and a reader beside a writer', async () => {
    const monitor = new ExclusionMonitor();
    await Promise.all([monitor.critical('/a', 1n, 'read'), monitor.critical('/a', 1n, 'read')]);
    expect(monitor.counterViolations).toBe(0);
    await Promise.all([monitor.critical('/a', 1n, 'read'), monitor.critical('/a', 2n, 'write')]);
    await Promise.all([monitor.critical('/a', 3n, 'write'), monitor.critical('/a', 3n, 'read')]);
    expect(monitor.counterViolations).toBe(2);
  });
});

describe('checkIntervals', () => {
  it('finds no violation in disjoint intervals with growing tokens, in any input order', () => {
    const list = [interval('/a', 30, 40, 3), interval('/a', 10, 20, 1), interval('/a', 20, 25, 2)];
    expect(checkIntervals(list)).toEqual({ overlaps: 0, tokenRegressions: 0 });
  });

  it('counts an interval that starts before an earlier one ended, even a long earlier one', () => {
    const list = [interval('/a', 0, 100, 1), interval('/a', 10, 20, 2), interval('/a', 50, 60, 3)];
    expect(checkIntervals(list).overlaps).toBe(2);
  });

  it('checks each path on its own', () => {
    const list = [interval('/a', 0, 100, 1), interval('/b', 10, 20, 1)];
    expect(checkIntervals(list)).toEqual({ overlaps: 0, tokenRegressions: 0 });
  });

  it('counts a fencing token that does not grow from one holder to the next', () => {
    const list = [interval('/a', 0, 10, 5), interval('/a', 10, 20, 5), interval('/a', 20, 30, 4)];
    expect(checkIntervals(list).tokenRegressions).toBe(2);
  });

  it('lets read sections overlap each other, not a writer, and checks only writer tokens', () => {
    const readers = [interval('/a', 0, 50, 9, 'read'), interval('/a', 10, 60, 1, 'read')];
    const writers = [interval('/a', 60, 70, 2, 'write'), interval('/a', 80, 90, 3, 'write')];
    expect(checkIntervals([...readers, ...writers])).toEqual({ overlaps: 0, tokenRegressions: 0 });
    const readerInWriter = [...writers, interval('/a', 85, 95, 1, 'read')];
    expect(checkIntervals(readerInWriter).overlaps).toBe(1);
    const writerInReaders = [...readers, interval('/a', 40, 45, 4, 'write')];
    expect(checkIntervals(writerInReaders).overlaps).toBe(1);
    const stale = [interval('/a', 0, 10, 5, 'write'), interval('/a', 20, 30, 5, 'write')];
    expect(checkIntervals(stale).tokenRegressions).toBe(1);
  });

  it('sums the three kinds of violation', () => {
    expect(totalViolations({ counter: 1, overlaps: 2, tokenRegressions: 3 })).toBe(6);
  });
});
