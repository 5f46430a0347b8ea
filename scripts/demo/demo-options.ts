/**
 * The demo's command line: `--name value` or `--name=value` for each option, `--embedded-zookeeper`
 * alone. Anything it cannot honour is refused with one line saying what is wrong and what is
 * accepted, rather than run with a default the user did not ask for.
 */
import type { StoreKind } from './demo-stack';

export interface DemoOptions {
  store: StoreKind;
  /** Concurrent orders per run. */
  orders: number;
  /** The stock each run starts from. */
  stock: number;
  /** The instances' STOCK_IO_DELAY_MS. */
  delay: number;
  /** The instances' ZK_SESSION_TIMEOUT_MS. */
  sessionTimeoutMs: number;
  /** Folder of the reports and the instances' logs, relative to the repository. */
  out: string;
  embeddedZooKeeper: boolean;
}

type ValueOption = Exclude<keyof DemoOptions, 'embeddedZooKeeper'>;

const WHOLE = 'a whole number >= 1';

/** Each option with a value: its flag, what it accepts, and how its value is read. */
const VALUE_OPTIONS: { flag: string; key: ValueOption; accepts: string; shape: string }[] = [
  { flag: '--store', key: 'store', accepts: 'sqlite or postgres', shape: 'sqlite|postgres' },
  { flag: '--orders', key: 'orders', accepts: WHOLE, shape: '<n>' },
  { flag: '--stock', key: 'stock', accepts: WHOLE, shape: '<n>' },
  { flag: '--delay', key: 'delay', accepts: WHOLE, shape: '<ms>' },
  { flag: '--session-timeout', key: 'sessionTimeoutMs', accepts: WHOLE, shape: '<ms>' },
  { flag: '--out', key: 'out', accepts: 'a folder for the report and the logs', shape: '<folder>' },
];

const EMBEDDED = '--embedded-zookeeper';

const OPTIONS_LINE = [...VALUE_OPTIONS.map((o) => `${o.flag} ${o.shape}`), EMBEDDED].join(', ');

/** The value of option `key` read from `raw`, or undefined when the option does not accept it. */
function read(key: ValueOption, raw: string): string | number | undefined {
  if (key === 'store') return raw === 'sqlite' || raw === 'postgres' ? raw : undefined;
  if (key === 'out') return raw;
  return /^\d+$/.test(raw) && Number(raw) >= 1 ? Number(raw) : undefined;
}

/** Reads the demo's arguments (process.argv without node and the script); `store` by default. */
export function parseDemoArgs(
  args: readonly string[],
  defaultStore: StoreKind,
): { ok: true; options: DemoOptions } | { ok: false; reason: string } {
  const options: DemoOptions = {
    store: defaultStore,
    orders: 1000,
    stock: 100,
    delay: 20,
    sessionTimeoutMs: 2000,
    out: '.data/demo',
    embeddedZooKeeper: false,
  };
  const fail = (reason: string) => ({ ok: false as const, reason });
  for (let i = 0; i < args.length; i++) {
    const eq = args[i].indexOf('=');
    const flag = eq === -1 ? args[i] : args[i].slice(0, eq);
    const inline = eq === -1 ? undefined : args[i].slice(eq + 1);
    if (flag === EMBEDDED) {
      if (inline !== undefined) return fail(`${EMBEDDED} takes no value (got "${inline}")`);
      options.embeddedZooKeeper = true;
      continue;
    }
    const option = VALUE_OPTIONS.find((o) => o.flag === flag);
    if (!option) return fail(`unknown argument "${args[i]}"; the options are ${OPTIONS_LINE}`);
    const raw = inline ?? (args[i + 1]?.startsWith('--') ? undefined : args[++i]);
    if (!raw) return fail(`${flag} needs a value: ${option.accepts}`);
    const value = read(option.key, raw);
    if (value === undefined) return fail(`${flag} "${raw}": expected ${option.accepts}`);
    Object.assign(options, { [option.key]: value });
  }
  return { ok: true, options };
}
