/** The demo's report: one table (terminal and Markdown) and the same data as JSON. */
import type { PausedHolderResult } from './paused-holder';
import type { RunSummary } from './run-summary';

export interface DemoReport {
  startedAt: string;
  store: string;
  zooKeeper: string;
  instances: number;
  stockIoDelayMs: number;
  runs: RunSummary[];
  pausedHolder?: PausedHolderResult;
  /** True when a locked run (or the paused-holder scenario) sold more than the stock. */
  lockedOversold: boolean;
}

const COLUMNS: [string, (r: RunSummary) => string][] = [
  ['run', (r) => r.name],
  ['endpoint', (r) => r.endpoint],
  ['requests', (r) => String(r.requests)],
  ['accepted', (r) => String(r.accepted)],
  ['rejected', (r) => String(r.rejected)],
  ['failed', (r) => String(r.failed)],
  ['final stock', (r) => String(r.finalStock)],
  ['sold', (r) => String(r.sold)],
  ['oversold', (r) => String(r.oversold)],
  ['orders/s', (r) => String(r.ordersPerSecond)],
  ['p50 ms', (r) => String(r.p50Ms)],
  ['p99 ms', (r) => String(r.p99Ms)],
];

/** The demo's verdict: did any locked run, or the paused-holder scenario, sell more than the stock? */
export function lockedRunOversold(
  runs: readonly RunSummary[],
  pausedHolder?: PausedHolderResult,
): boolean {
  return (
    runs.some((r) => r.endpoint === '/orders' && r.oversold > 0) ||
    (pausedHolder?.oversold ?? 0) > 0
  );
}

/** A plain-text table with aligned columns (numbers right-aligned). */
export function formatTable(runs: readonly RunSummary[]): string {
  const rows = [
    COLUMNS.map(([title]) => title),
    ...runs.map((r) => COLUMNS.map(([, get]) => get(r))),
  ];
  const widths = COLUMNS.map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  const line = (row: string[]) =>
    row.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join('\n');
}

export function formatPausedHolder(p: PausedHolderResult): string {
  const answer = `${p.pausedHolderAnswer.status} ${p.pausedHolderAnswer.error ?? ''}`.trim();
  return [
    `paused holder: ${p.holder.instance} (pid ${p.holder.pid}) held the lock with fencing token ` +
      `${p.holder.fencingToken}, read the stock, and was frozen (SIGSTOP) for ${p.pausedMs} ms ` +
      `(session timeout ${p.sessionTimeoutMs} ms).`,
    `  meanwhile the other instances sold ${p.othersAccepted} of ${p.stock} (rejected ${p.othersRejected}).`,
    `  after SIGCONT its write was ${p.fencedWriteRejected ? 'REFUSED by the fencing token' : 'NOT refused'} ` +
      `(HTTP ${answer}); final stock ${p.finalStock}, sold ${p.sold}, oversold ${p.oversold}.`,
  ].join('\n');
}

export function formatMarkdown(report: DemoReport): string {
  const header = `| ${COLUMNS.map(([t]) => t).join(' | ')} |`;
  const align = `|${COLUMNS.map((_, c) => (c < 2 ? ' --- ' : ' ---: ')).join('|')}|`;
  const rows = report.runs.map((r) => `| ${COLUMNS.map(([, get]) => get(r)).join(' | ')} |`);
  const failures = report.runs
    .filter((r) => r.failed > 0)
    .map((r) => `- ${r.name}: ${JSON.stringify(r.failures)}`);
  return [
    '# Demo report',
    '',
    `${report.startedAt}: ${report.instances} sample-app instances, store ${report.store}, ` +
      `ZooKeeper ${report.zooKeeper}, payment delay ${report.stockIoDelayMs} ms.`,
    '',
    header,
    align,
    ...rows,
    ...(failures.length ? ['', 'Failed requests:', ...failures] : []),
    ...(report.pausedHolder
      ? [
          '',
          '## Paused holder',
          '',
          ...formatPausedHolder(report.pausedHolder)
            .split('\n')
            .map((l) => `- ${l.trim()}`),
        ]
      : []),
    '',
    report.lockedOversold ? '**A locked run oversold.**' : 'No locked run oversold.',
    '',
  ].join('\n');
}
