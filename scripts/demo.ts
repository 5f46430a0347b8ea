/**
 * `npm run demo [-- --store postgres --orders 1000 --stock 100 --delay 20]`
 *
 * Starts ZooKeeper (unless ZK_CONNECT is set; the embedded in-memory server where none is
 * installed and none can be, or with --embedded-zookeeper), a shared store and three sample-app instances,
 * then: 1,000 concurrent orders for 100 units against `/orders/unsafe` (oversells), the same
 * against `/orders` (@DistributedLock + fencing: sells exactly 100), and the paused-holder
 * scenario. Prints a table, saves report.json and report.md under .data/demo/, stops
 * everything, and exits 1 unless the locked run sold exactly what the stock allowed with no
 * failed order and the fencing token refused the paused holder's write (demoVerdict), 2 if
 * the demo itself failed or its command line is wrong (one line saying what is accepted:
 * scripts/demo/demo-options.ts).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join, relative, resolve } from 'node:path';
import {
  DemoReport,
  demoVerdict,
  formatMarkdown,
  formatPausedHolder,
  formatTable,
  formatVerdict,
} from './demo/demo-report';
import { parseDemoArgs } from './demo/demo-options';
import { DemoStack } from './demo/demo-stack';
import { HttpJson } from './demo/http-json';
import { runOversell } from './demo/oversell-run';
import { runPausedHolder } from './demo/paused-holder';
import { Progress } from './demo/progress';
import type { RunSummary } from './demo/run-summary';

const ROOT = join(__dirname, '..');

async function main(): Promise<number> {
  const pgUrl = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '')
    ? process.env.DATABASE_URL
    : undefined;
  const args = parseDemoArgs(process.argv.slice(2), pgUrl ? 'postgres' : 'sqlite');
  if (!args.ok) {
    process.stderr.write(`demo: ${args.reason}\n`);
    return 2;
  }
  const { store, orders, stock, delay, sessionTimeoutMs } = args.options;
  const dir = resolve(ROOT, args.options.out);
  const startedAt = new Date().toISOString();
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir))
    if (/^(inventory\.sqlite.*|.*\.log)$/.test(f)) rmSync(join(dir, f));

  const progress = new Progress();
  const http = new HttpJson();
  let stack: DemoStack | undefined;
  const stopAll = async () => {
    http.close();
    await stack?.stop();
    stack = undefined;
  };
  // What the stack started so far has watchdogs: a signal before `stack` is set stops it too.
  const onSignal = (signal: NodeJS.Signals) => {
    progress.step(`${signal}: stopping everything`);
    void stopAll().finally(() => process.exit(128 + constants.signals[signal]));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    stack = await DemoStack.start({
      dir,
      store,
      postgresUrl: pgUrl,
      zkConnect: process.env.ZK_CONNECT || undefined,
      embeddedZooKeeper: args.options.embeddedZooKeeper,
      env: { STOCK_IO_DELAY_MS: String(delay), ZK_SESSION_TIMEOUT_MS: String(sessionTimeoutMs) },
      onStep: (m) => progress.step(m),
    });
    progress.step(
      `instances: ${stack.instances.map((i) => `${i.name} ${i.url} (pid ${i.pid})`).join(', ')}`,
    );
    const runs: RunSummary[] = [];
    for (const [name, endpoint] of [
      ['without lock', '/orders/unsafe'],
      ['with lock', '/orders'],
    ]) {
      progress.step(`${name}: stock ${stock}, ${orders} concurrent orders to ${endpoint}`);
      runs.push(
        await runOversell({
          name,
          endpoint,
          http,
          urls: stack.urls,
          productId: 'demo-widget',
          stock,
          orders,
          onProgress: progress.bar(`  ${name.padEnd(12)}`, orders),
        }),
      );
    }
    progress.step('paused holder: SIGSTOP a lock holder past its session timeout');
    const pausedHolder = await runPausedHolder({
      stack,
      http,
      productId: 'demo-gadget',
      stock: 10,
      sessionTimeoutMs,
      namespace: process.env.ZK_NAMESPACE || undefined, // the instances inherit it too
      onStep: (m) => progress.step(`  ${m}`),
    });
    const verdict = demoVerdict(runs, pausedHolder);
    const report: DemoReport = {
      startedAt,
      store: store === 'sqlite' ? 'SQLite (one file shared by the instances)' : 'PostgreSQL',
      zooKeeper: stack.zkConnect,
      instances: stack.instances.length,
      stockIoDelayMs: delay,
      runs,
      pausedHolder,
      verdict,
    };
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report, null, 2) + '\n');
    writeFileSync(join(dir, 'report.md'), formatMarkdown(report));
    await stopAll();
    process.stdout.write(`\n${formatTable(runs)}\n\n${formatPausedHolder(pausedHolder)}\n\n`);
    const where = relative(process.cwd(), dir) || '.';
    process.stdout.write(
      `Report: ${where}/report.json, ${where}/report.md (instance logs beside them)\n`,
    );
    process.stdout.write(`${formatVerdict(verdict)}\n`);
    if (!verdict.passed) return 1;
    const unsafe = runs[0];
    process.stdout.write(
      unsafe.oversold > 0
        ? `Without the lock ${unsafe.sold} units were sold from a stock of ${stock}; with it, exactly ${runs[1].sold}.\n`
        : 'Note: the unlocked run did not oversell this time (try a larger --delay).\n',
    );
    return 0;
  } finally {
    await stopAll();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.stack : err}\n`);
    process.exit(2);
  },
);
