import { LatencyRecorder, percentile, round } from './latency.stats';

describe('percentile', () => {
  it('is the nearest-rank value of unsorted samples', () => {
    const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 99)).toBe(10);
    expect(percentile(values, 0)).toBe(1);
  });

  it('is 0 without samples', () => {
    expect(percentile([], 50)).toBe(0);
  });
});

describe('LatencyRecorder', () => {
  it('records one sample per finished timer', () => {
    const recorder = new LatencyRecorder();
    recorder.start()();
    recorder.addAll([1, 2]);
    expect(recorder.count).toBe(3);
    expect(recorder.values().every((v) => v >= 0)).toBe(true);
  });
});

describe('round', () => {
  it('keeps the given number of decimals', () => {
    expect(round(1.23456, 2)).toBe(1.23);
    expect(round(1.23456)).toBe(1.235);
  });
});
