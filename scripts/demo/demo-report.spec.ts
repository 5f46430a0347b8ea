import { DemoReport, formatMarkdown, formatTable, lockedRunOversold } from './demo-report';
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
      lockedOversold: false,
    };
    const md = formatMarkdown(report);
    expect(md).toContain(
      '| with lock | /orders | 1000 | 100 | 900 | 0 | 0 | 100 | 0 | 500 | 12 | 345 |',
    );
    expect(md).toContain('No locked run oversold.');
  });

  it('fails the demo when a locked run or the paused holder oversold, not the unsafe run', () => {
    expect(lockedRunOversold(runs)).toBe(false);
    expect(lockedRunOversold([...runs, run('with lock', '/orders', 101)])).toBe(true);
    const paused = { oversold: 1 } as PausedHolderResult;
    expect(lockedRunOversold(runs, paused)).toBe(true);
    expect(lockedRunOversold(runs, { ...paused, oversold: 0 })).toBe(false);
  });
});
