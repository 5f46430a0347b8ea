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
  verdict: DemoVerdict;
}

/** Whether the locked runs proved the lock works; each problem says what went wrong. */
export interface DemoVerdict {
  passed: boolean;
  problems: string[];
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

/**
 * The demo's verdict. Selling no more than the stock proves nothing on its own (a run whose
 * every order failed sells nothing), so a locked run passes only if it sold exactly
 * min(stock, orders) and every order was either accepted or refused as out of stock. The paused
 * holder passes only if the fencing token refused its late write and nothing was oversold.
 */
export function demoVerdict(
  runs: readonly RunSummary[],
  pausedHolder: PausedHolderResult,
): DemoVerdict {
  const problems: string[] = [];
  for (const r of runs.filter((run) => run.endpoint === '/orders')) {
    const expected = Math.min(r.initialStock, r.requests);
    const what = `${r.name} (stock ${r.initialStock}, ${r.requests} orders)`;
    if (r.oversold > 0) {
      problems.push(`${what}: oversold ${r.oversold} (sold ${r.sold})`);
    } else if (r.sold !== expected || r.accepted !== expected) {
      problems.push(
        `${what}: sold ${r.sold} and accepted ${r.accepted} orders, expected exactly ${expected}`,
      );
    }
    if (r.failed > 0) {
      problems.push(
        `${what}: ${r.failed} of its orders failed other than "out of stock": ${JSON.stringify(r.failures)}`,
      );
    }
  }
  if (!pausedHolder.fencedWriteRejected) {
    const { status, error } = pausedHolder.pausedHolderAnswer;
    problems.push(
      `paused holder: its late write was not refused by the fencing token (HTTP ${status}` +
        `${error ? ` ${error}` : ''}, expected 409 STALE_FENCING_TOKEN)`,
    );
  }
  if (pausedHolder.oversold > 0) {
    problems.push(
      `paused holder: oversold ${pausedHolder.oversold} (sold ${pausedHolder.sold} of ${pausedHolder.stock})`,
    );
  }
  return { passed: problems.length === 0, problems };
}

/** The verdict as the terminal and report.md show it: one line, or a line per problem. */
export function formatVerdict(verdict: DemoVerdict): string {
  if (verdict.passed) {
    return (
      'PASSED: the locked run sold exactly what the stock allowed, no more, no order failed, ' +
      "and the fencing token refused the paused holder's late write."
    );
  }
  return ['FAILED:', ...verdict.problems.map((p) => `- ${p}`)].join('\n');
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
    formatVerdict(report.verdict),
    '',
  ].join('\n');
}
