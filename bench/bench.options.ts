import { CLIENT_DEFAULTS } from '../lib/core/client/client-options';
import { SCENARIOS, ScenarioName, SESSIONS_OF } from './bench.types';

export interface BenchOptions {
  quick: boolean;
  /** Run only these scenarios (the raw baselines are still run when a ratio needs them). */
  only?: ScenarioName;
  /** Write one JSON line per scenario to this file. */
  out?: string;
  /** Also run the scenarios through Apache Curator and kazoo, and print ours / theirs. */
  peers: boolean;
  /**
   * `many-keys` (and Curator's row in turn with it) on a client of this many sessions, in turn
   * with the raw-parallel row of as many; left out, the library's default.
   */
  sessions?: number;
  help: boolean;
}

/** Operation counts per scenario: `callers` loops of `opsPerCaller` each, after a warm-up. */
export interface ScenarioSize {
  callers: number;
  opsPerCaller: number;
  warmupOpsPerCaller: number;
}

/** The --sessions values: those with a raw-parallel row of as many sessions, many-keys' baseline. */
const SESSIONS = SCENARIOS.filter((n) => n.startsWith('raw-parallel')).map((n) => SESSIONS_OF[n]!);

export const USAGE = `Usage: npm run bench -- [--quick] [--peers] [--only <scenario>] [--out <file.jsonl>] [--sessions <n>]
  --quick            a short run (CI: checks the bench still works; numbers are noisy)
  --only <scenario>  one of: ${SCENARIOS.join(', ')}
  --out <file>       also write one JSON line per scenario
  --peers            also run them through Apache Curator 5.4 and kazoo 2.8 (ours / theirs)
  --sessions <n>     many-keys on a client of n sessions (${SESSIONS.join(', ')}; default ${CLIENT_DEFAULTS.sessions})
Set ZK_CONNECT=127.0.0.1:<port> to use a running ZooKeeper instead of starting one.`;

export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  const options: BenchOptions = { quick: false, peers: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--peers') options.peers = true;
    else if (arg === '--only') options.only = scenarioName(argv[++i]);
    else if (arg === '--out') options.out = requireValue('--out', argv[++i]);
    else if (arg === '--sessions') options.sessions = sessionsCount(argv[++i]);
    else throw new Error(`Unknown argument "${arg}".\n${USAGE}`);
  }
  return options;
}

function requireValue(flag: string, value: string | undefined): string {
  if (!value || value.startsWith('--')) throw new Error(`${flag} needs a value.\n${USAGE}`);
  return value;
}

function scenarioName(value: string | undefined): ScenarioName {
  const name = requireValue('--only', value);
  if (!(SCENARIOS as readonly string[]).includes(name)) {
    throw new Error(`Unknown scenario "${name}": use one of ${SCENARIOS.join(', ')}.`);
  }
  return name as ScenarioName;
}

function sessionsCount(value: string | undefined): number {
  const n = Number(requireValue('--sessions', value));
  if (!SESSIONS.includes(n)) {
    throw new Error(
      `--sessions ${value}: use one of ${SESSIONS.join(', ')} (a raw-parallel row's).`,
    );
  }
  return n;
}

const FULL: Record<ScenarioName, ScenarioSize> = {
  // 3,000 warm-up ops: one caller's client CPU per op falls over its first 1,500-2,000 ops as V8
  // optimizes the raw client's and the lock's code (450-700 -> 190-290 us; bench/uncontended.ab.ts
  // prints the curve); with 300 both rows were measured partly cold (bench/README.md, "The
  // uncontended row").
  'raw-cycle': { callers: 1, opsPerCaller: 2000, warmupOpsPerCaller: 3000 },
  // 100 warm-up ops per caller for the 32-caller rows (as the peers get): with 10, a row run
  // alone (--only many-keys) was measured while V8 still optimized (145-193 against 57-76 us).
  'raw-parallel': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  'raw-parallel-2s': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  'raw-parallel-4s': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  'raw-handoff': { callers: 1, opsPerCaller: 300, warmupOpsPerCaller: 30 },
  'local-mutex': { callers: 32, opsPerCaller: 500, warmupOpsPerCaller: 5 },
  uncontended: { callers: 1, opsPerCaller: 2000, warmupOpsPerCaller: 3000 },
  'same-key-1p': { callers: 32, opsPerCaller: 500, warmupOpsPerCaller: 5 },
  'same-key-4p': { callers: 8, opsPerCaller: 100, warmupOpsPerCaller: 5 },
  'many-keys': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  'many-keys-1s': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  'many-keys-2s': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  'many-keys-4s': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  // Curator's many-keys, in turn with ours (--peers): the same size (its JVM warms up longer).
  'curator-many-keys': { callers: 32, opsPerCaller: 100, warmupOpsPerCaller: 100 },
  handoff: { callers: 1, opsPerCaller: 300, warmupOpsPerCaller: 30 },
  'leader-step-down': { callers: 1, opsPerCaller: 100, warmupOpsPerCaller: 10 },
  // A process per op, killed; each op lasts about a session timeout (--quick: 5).
  'leader-crash': { callers: 1, opsPerCaller: 10, warmupOpsPerCaller: 0 },
  'rw-read-heavy': { callers: 32, opsPerCaller: 200, warmupOpsPerCaller: 5 },
  'rw-write-only': { callers: 32, opsPerCaller: 200, warmupOpsPerCaller: 5 },
  'rw-read-heavy-4p': { callers: 8, opsPerCaller: 100, warmupOpsPerCaller: 5 },
  'rw-write-only-4p': { callers: 8, opsPerCaller: 100, warmupOpsPerCaller: 5 },
  'semaphore-4': { callers: 32, opsPerCaller: 50, warmupOpsPerCaller: 2 },
  'multi-3': { callers: 32, opsPerCaller: 50, warmupOpsPerCaller: 2 },
  // Paths used once each (callers 32); --quick uses 1,000.
  'memory-10k': { callers: 32, opsPerCaller: 10_000, warmupOpsPerCaller: 0 },
  // 3 processes x 100 callers, each asking 5 times, granted or timed out, also without --quick:
  // the burst the target is set for. Over longer runs the process that takes most changes from burst to burst
  // and the totals even out (20 asks each, batches unbounded: Jain's index 0.994, with a third
  // fewer grants than with bounded batches; bench/README.md "Fair shares under overload").
  'fair-3p': { callers: 100, opsPerCaller: 5, warmupOpsPerCaller: 0 },
};

/** leader-crash: the crashed leader's session timeout, the ratio's denominator. */
export const LEADER_CRASH_SESSION_MS = 2_000;

/** Sizes for a run: `--quick` divides the measured operations by 10. */
export function sizeOf(name: ScenarioName, quick: boolean): ScenarioSize {
  const size = FULL[name];
  if (!quick) return size;
  return {
    callers: size.callers,
    opsPerCaller: Math.max(5, Math.round(size.opsPerCaller / 10)),
    warmupOpsPerCaller: Math.max(2, Math.round(size.warmupOpsPerCaller / 10)),
  };
}
