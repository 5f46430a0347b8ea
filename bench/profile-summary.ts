/**
 * Summarises a V8 CPU profile (from `node --cpu-prof`): self time per function, and the share
 * of time spent under lib/, node-zookeeper-client, bench/ and Node itself.
 *   npx ts-node --transpile-only bench/profile-summary.ts <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function area(url: string): string {
  if (/\/(typescript|ts-node|@cspotcode)\/|node:internal\/modules/.test(url))
    return 'startup: ts-node compile, module loading';
  if (url.includes('/node-zookeeper-client/')) return 'node-zookeeper-client';
  if (url.includes('/lib/core/')) return 'lib/core';
  if (url.includes('/bench/')) return 'bench';
  if (url.includes('/node_modules/')) return 'other node_modules';
  if (url.startsWith('node:')) return 'node internals';
  return url === '' ? '(vm: gc, idle, program)' : 'other';
}

function main(file: string, top: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)),
  );
  const perFunction = new Map<string, number>();
  const perArea = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const where = frame.url.replace(/^.*\/(node_modules\/|lib\/|bench\/)/, '$1');
    const key = `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`;
    perFunction.set(key, (perFunction.get(key) ?? 0) + us);
    perArea.set(area(frame.url), (perArea.get(area(frame.url)) ?? 0) + us);
    total += us;
  }
  const pct = (us: number) => ((100 * us) / total).toFixed(1).padStart(5) + '%';
  console.log(`total sampled: ${(total / 1000).toFixed(0)} ms`);
  for (const [name, us] of [...perArea].sort((a, b) => b[1] - a[1]))
    console.log(`${pct(us)}  ${name}`);
  // Busy time of the run itself: without idle and without ts-node's start-up work.
  const skip = (key: string) =>
    key.startsWith('(idle)') || /typescript|ts-node|node:internal\/modules/.test(key);
  const busy = [...perFunction].filter(([key]) => !skip(key));
  const busyTotal = busy.reduce((sum, [, us]) => sum + us, 0);
  console.log(`\nbusy (no idle, no start-up): ${(busyTotal / 1000).toFixed(0)} ms; by self time:`);
  const busyPct = (us: number) => ((100 * us) / busyTotal).toFixed(1).padStart(5) + '%';
  const sorted = busy.sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [name, us] of sorted) console.log(`${busyPct(us)}  ${name}`);
}

const [file, top] = process.argv.slice(2);
if (!file) {
  console.error('Usage: ts-node --transpile-only bench/profile-summary.ts <file.cpuprofile> [top]');
  process.exitCode = 1;
} else {
  main(file, Number(top ?? 25));
}
