import { RoundTrips } from './round-trips';

describe('RoundTrips', () => {
  it('knows nothing before a first answer', () => {
    expect(new RoundTrips().timeoutMs).toBeUndefined();
  });

  it('starts at three times the first round trip (RFC 6298)', () => {
    const trips = new RoundTrips();
    trips.observe(10);
    expect(trips.timeoutMs).toBe(30);
  });

  it('settles near a steady round trip, and rises with a slower one', () => {
    const trips = new RoundTrips();
    for (let i = 0; i < 100; i++) trips.observe(4);
    expect(trips.timeoutMs).toBeCloseTo(4, 3);
    trips.observe(40);
    expect(trips.timeoutMs!).toBeGreaterThan(40);
  });

  it('ignores a sample that is not a duration', () => {
    const trips = new RoundTrips();
    trips.observe(Number.NaN);
    trips.observe(-1);
    expect(trips.timeoutMs).toBeUndefined();
  });
});
