import { DemoReport, demoVerdict, formatMarkdown, formatTable, formatVerdict } from './demo-report';
import type { PausedHolderResult } from './paused-holder';
import type { RunSummary } from './run-summary';

const run = (name: string, endpoint: string, sold: number): RunSummary => ({
  name,
  endpoint,
  instances: 3,
  requests: 1000,
  accepted: sold,
  rejected: 1000 - sold,
  failed: 0,
  failures: {},
  initialStock: 100,
  finalStock: 0,
  sold,
  oversold: Math.max(0, sold - 100),
  ordersPerSecond: 500,
  p50Ms: 12,
  p99Ms: 345,
  durationMs: 2000,
});

const paused: PausedHolderResult = {
  productId: 'demo-gadget',
  stock: 10,
  sessionTimeoutMs: 2000,
  holder: { instance: 'app-A', pid: 4302, fencingToken: '7' },
  pausedMs: 2400,
  othersAccepted: 10,
  othersRejected: 0,
  pausedHolderAnswer: { status: 409, error: 'STALE_FENCING_TOKEN' },
  fencedWriteRejected: true,
  finalStock: 0,
  sold: 10,
  oversold: 0,
};

describe('demo report', () => {
  const runs = [run('without lock', '/orders/unsafe', 1000), run('with lock', '/orders', 100)];

  it('prints one aligned row per run under the column titles', () => {
    const lines = formatTable(runs).split('\n');
    expect(lines[0]).toMatch(
      /^run +endpoint +requests +accepted +rejected +failed +final stock +sold +oversold +orders\/s +p50 ms +p99 ms$/,
    );
    expect(lines[2]).toMatch(
      /^without lock +\/orders\/unsafe +1000 +1000 +0 +0 +0 +1000 +900 +500 +12 +345$/,
    );
    expect(lines[3]).toMatch(/^with lock +\/orders +1000 +100 +900 +0 +0 +100 +0 +500 +12 +345$/);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });

  it('writes the same numbers as a Markdown table with the verdict', () => {
    const report: DemoReport = {
      startedAt: '2025-01-01T00:00:00.000Z',
      store: 'SQLite',
      zooKeeper: '127.0.0.1:2181',
      instances: 3,
      stockIoDelayMs: 20,
      runs,
      verdict: demoVerdict(runs, paused),
    };
    const md = formatMarkdown(report);
    expect(md).toContain(
      '| with lock | /orders | 1000 | 100 | 900 | 0 | 0 | 100 | 0 | 500 | 12 | 345 |',
    );
    expect(md).toContain('PASSED: the locked run sold exactly what the stock allowed');
    const failed = formatMarkdown({ ...report, verdict: { passed: false, problems: ['x: y'] } });
    expect(failed).toContain('FAILED:\n- x: y');
  });

  it('passes a locked run that sold exactly the stock, whatever the unsafe run did', () => {
    expect(demoVerdict(runs, paused)).toEqual({ passed: true, problems: [] });
    const fewOrders = { ...run('with lock', '/orders', 40), requests: 40, rejected: 0 };
    expect(demoVerdict([fewOrders], paused).passed).toBe(true);
  });

  it('fails a locked run that oversold', () => {
    expect(demoVerdict([...runs, run('with lock', '/orders', 101)], paused).problems).toEqual([
      'with lock (stock 100, 1000 orders): oversold 1 (sold 101)',
    ]);
  });

  it('fails a locked run that sold nothing because every order failed', () => {
    const broken: RunSummary = {
      ...run('with lock', '/orders', 0),
      rejected: 0,
      failed: 1000,
      failures: { '409 LOCK_TIMEOUT': 1000 },
      finalStock: 100,
    };
    const verdict = demoVerdict([runs[0], broken], paused);
    expect(verdict.passed).toBe(false);
    expect(verdict.problems).toEqual([
      'with lock (stock 100, 1000 orders): sold 0 and accepted 0 orders, expected exactly 100',
      'with lock (stock 100, 1000 orders): 1000 of its orders failed other than "out of stock": ' +
        '{"409 LOCK_TIMEOUT":1000}',
    ]);
    expect(formatVerdict(verdict)).toMatch(/^FAILED:\n- with lock .*sold 0/);
  });

  it('fails a locked run with one failed order even when it sold the whole stock', () => {
    const oneFailed = {
      ...runs[1],
      rejected: 899,
      failed: 1,
      failures: { 'network ECONNRESET': 1 },
    };
    expect(demoVerdict([oneFailed], paused).problems).toEqual([
      'with lock (stock 100, 1000 orders): 1 of its orders failed other than "out of stock": ' +
        '{"network ECONNRESET":1}',
    ]);
  });

  it("fails when the fencing token did not refuse the paused holder's write", () => {
    const written: PausedHolderResult = {
      ...paused,
      pausedHolderAnswer: { status: 201 },
      fencedWriteRejected: false,
      sold: 10,
    };
    expect(demoVerdict(runs, written).problems).toEqual([
      'paused holder: its late write was not refused by the fencing token (HTTP 201, ' +
        'expected 409 STALE_FENCING_TOKEN)',
    ]);
  });

  it('fails when the paused-holder scenario oversold', () => {
    const oversold: PausedHolderResult = { ...paused, sold: 11, oversold: 1 };
    expect(demoVerdict(runs, oversold).problems).toEqual([
      'paused holder: oversold 1 (sold 11 of 10)',
    ]);
  });
});
