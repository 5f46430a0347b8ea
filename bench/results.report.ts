/** The terminal table and the JSON lines. */
import { appendFileSync, writeFileSync } from 'node:fs';
import type { HerdProbePoint, ScenarioResult, TargetCheck } from './bench.types';

const COLUMNS: Array<[string, (r: ScenarioResult) => string]> = [
  ['scenario', (r) => r.scenario],
  ['procs x callers', (r) => `${r.processes} x ${r.callers / r.processes}`],
  ['sessions', (r) => (r.sessions === undefined ? '-' : String(r.sessions))],
  ['ops', (r) => String(r.ops)],
  ['ops/s', (r) => r.opsPerSec.toFixed(0)],
  ['p50 ms', (r) => r.p50Ms.toFixed(2)],
  ['p99 ms', (r) => r.p99Ms.toFixed(2)],
  ['violations', (r) => String(r.violations)],
  ['zk req/op', (r) => r.zkRequestsPerOp.toFixed(2)],
  ['zk sent/op', (r) => r.zkPacketsSentPerOp.toFixed(2)],
  ['client cpu us/op', (r) => r.clientCpuUsPerOp?.toFixed(0) ?? '-'],
  ['zk cpu us/op', (r) => r.zkCpuUsPerOp?.toFixed(0) ?? '-'],
];

/** A Markdown table; `left[i]` left-aligns column i (the others are numbers, right-aligned). */
export function table(header: string[], rows: string[][], left: boolean[] = [true]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    '| ' +
    cells
      .map((cell, i) => (left[i] ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join(' | ') +
    ' |';
  const rule =
    '|' +
    widths.map((w, i) => (left[i] ? ':' : '-') + '-'.repeat(w) + (left[i] ? '-' : ':')).join('|') +
    '|';
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function resultsTable(results: ScenarioResult[]): string {
  return table(
    COLUMNS.map(([name]) => name),
    results.map((r) => COLUMNS.map(([, cell]) => cell(r))),
  );
}

export function targetsTable(checks: TargetCheck[]): string {
  return table(
    ['scenario', 'target', 'value', 'limit', 'met'],
    checks.map((c) => [
      c.scenario,
      c.description,
      String(c.value),
      String(c.limit),
      c.met ? 'yes' : 'NO',
    ]),
    [true, true],
  );
}

export class JsonLinesWriter {
  constructor(private readonly file?: string) {
    if (file) writeFileSync(file, '');
  }

  write(record: object): void {
    if (this.file) appendFileSync(this.file, JSON.stringify(record) + '\n');
  }
}

/** memory-10k's heap before and after, e.g. `5.1 MB -> 5.2 MB (1.02 x)`. */
export function heapText(result: ScenarioResult): string {
  if (!result.heap) return '-';
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  const { beforeBytes, afterBytes } = result.heap;
  return `${mb(beforeBytes)} -> ${mb(afterBytes)} (${(afterBytes / beforeBytes).toFixed(3)} x)`;
}

/** The herd probe's sweep in one line: requests (packets sent) per op at each process count. */
export function herdLine(sweep: readonly HerdProbePoint[]): string {
  const points = sweep.map(
    (p) => `${p.processes} processes ${p.zkRequestsPerOp} (${p.zkPacketsSentPerOp})`,
  );
  return `herd probe, 1 caller per process, ZooKeeper requests (packets sent) per op: ${points.join(', ')}`;
}

/** fair-3p in one line: each process's grants (share) and timeouts, and Jain's index. */
export function fairLine(result: ScenarioResult): string {
  const fair = result.fairShares;
  if (!fair) return 'fair-3p: -';
  const each = fair.grants.map(
    (g, i) => `${g} (${(fair.shares[i] * 100).toFixed(1)} %, ${fair.timeouts[i]} timeouts)`,
  );
  return `fair-3p, grants per process under the same overload: ${each.join(', ')}; Jain's index ${fair.jainIndex}`;
}
