import { percentile, summarizeRun } from './run-summary';

describe('run summary', () => {
  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });

  it('counts accepted, out-of-stock and other answers, and the oversold units', () => {
    const summary = summarizeRun({
      name: 'unsafe',
      endpoint: '/orders/unsafe',
      instances: 3,
      outcomes: [
        { status: 201, latencyMs: 10 },
        { status: 201, latencyMs: 30 },
        { status: 201, latencyMs: 20 },
        { status: 409, error: 'OUT_OF_STOCK', latencyMs: 5 },
        { status: 409, error: 'Conflict', latencyMs: 40 },
        { status: 0, error: 'ECONNRESET', latencyMs: 1 },
      ],
      initialStock: 2,
      finalStock: 0,
      sold: 3,
      durationMs: 2000,
    });
    expect(summary).toMatchObject({
      requests: 6,
      accepted: 3,
      rejected: 1,
      failed: 2,
      failures: { '409 Conflict': 1, 'network ECONNRESET': 1 },
      oversold: 1,
      ordersPerSecond: 3,
      p50Ms: 10,
      p99Ms: 40,
    });
  });
});
