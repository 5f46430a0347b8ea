/**
 * Which rows a run measures and in what order: RUN_ORDER (`many-keys` placed by runOrder()),
 * BASELINE (the row a target is a ratio to, which `--only` runs too), and IN_TURN, the groups
 * of rows measured in turn as one step (stepsOf; bench/in-turn.runner.ts).
 */
import { rawParallelWith, SESSIONS_OF, ScenarioName, sessionsOf } from './bench.types';

/**
 * Each lock scenario runs right after its baseline, so both see the same machine load (or in
 * turn with it, see IN_TURN); `many-keys` (the default options, or `sessions` of --sessions) is
 * placed by runOrder() after the many-keys row with as many sessions.
 */
const RUN_ORDER: ScenarioName[] = [
  'raw-cycle',
  'uncontended',
  'raw-parallel',
  'many-keys-1s',
  'raw-parallel-2s',
  'many-keys-2s',
  'raw-parallel-4s',
  'many-keys-4s',
  'local-mutex',
  'same-key-1p',
  'same-key-4p',
  'raw-handoff',
  'handoff',
  'leader-step-down',
  'leader-crash',
  'rw-write-only',
  'rw-read-heavy',
  'rw-write-only-4p',
  'rw-read-heavy-4p',
  'semaphore-4',
  'multi-3',
  'memory-10k',
  'fair-3p',
];

export function runOrder(sessions?: number): ScenarioName[] {
  const order = [...RUN_ORDER];
  const sameSessions = order.findIndex(
    (n) => n.startsWith('many-keys') && SESSIONS_OF[n] === sessionsOf('many-keys', sessions),
  );
  order.splice(
    (sameSessions < 0 ? order.indexOf('many-keys-4s') : sameSessions) + 1,
    0,
    'many-keys',
    'curator-many-keys',
  );
  return order;
}

/**
 * Peers' rows measured in turn with ours (`--peers` only), by the row of ours they are the
 * peer of: Curator's many-keys (bench/curator.workload.ts).
 */
export const PEER_ROWS: Partial<Record<ScenarioName, ScenarioName>> = {
  'curator-many-keys': 'many-keys',
};

/** The raw baseline a scenario's target is a ratio to: `--only` runs it too. */
export const BASELINE: Partial<Record<ScenarioName, ScenarioName>> = {
  uncontended: 'raw-cycle',
  'same-key-1p': 'raw-cycle',
  'same-key-4p': 'raw-cycle',
  handoff: 'raw-handoff',
  'leader-step-down': 'raw-handoff',
};
for (const name of ['many-keys-1s', 'many-keys-2s', 'many-keys-4s'] as const) {
  BASELINE[name] = rawParallelWith(SESSIONS_OF[name]!);
}

/**
 * A row's baseline (BASELINE); `many-keys` and Curator's row in turn with it, the raw-parallel
 * row of many-keys' sessions (`sessions` of --sessions, or the default's).
 */
export function baselineOf(name: ScenarioName, sessions?: number): ScenarioName | undefined {
  if (name !== 'many-keys' && name !== 'curator-many-keys') return BASELINE[name];
  return rawParallelWith(sessionsOf('many-keys', sessions)!);
}

/**
 * The rows a run selects, in run order: all, or `--only`'s and its baseline; with `peers`, the
 * peers' rows of those (PEER_ROWS), without, none.
 */
export function selectedRows(
  only?: ScenarioName,
  peers = false,
  sessions?: number,
): ScenarioName[] {
  const peerOf = (name: ScenarioName) => PEER_ROWS[name];
  return runOrder(sessions).filter((name) => {
    if (peerOf(name)) return peers && (!only || only === name || only === peerOf(name));
    return !only || name === only || baselineOf(only, sessions) === name;
  });
}

/**
 * Rows whose targets are ratios between them, closer than the drift of a shared machine between
 * rows run one after the other: uncontended's p50 within 5 % of raw-cycle's, and each many-keys
 * row at least its raw-parallel row (many-keys-4s and many-keys read 1.11 and 0.96 x
 * raw-parallel-4s in one run, the same configuration a minute apart). So raw-cycle with
 * uncontended, and each raw-parallel row with the many-keys rows checked against it (`many-keys`
 * with the one of its sessions, the default's or `sessions` of --sessions), in run order.
 */
export function inTurnGroups(sessions?: number): ScenarioName[][] {
  const order = runOrder(sessions);
  return [
    ['raw-cycle', 'uncontended'],
    ...order
      .filter((raw) => raw.startsWith('raw-parallel'))
      .map((raw) => [raw, ...order.filter((name) => baselineOf(name, sessions) === raw)]),
  ];
}

/** The groups with `many-keys` at the default's sessions. */
export const IN_TURN = inTurnGroups();

/**
 * The selected rows in run order, one step each; the selected rows of a group of IN_TURN one
 * step (where its first one runs) when they are 2 or more.
 */
export function stepsOf(selected: readonly ScenarioName[], sessions?: number): ScenarioName[][] {
  const groups = inTurnGroups(sessions);
  const steps: ScenarioName[][] = [];
  for (const name of selected) {
    if (steps.some((step) => step.includes(name))) continue;
    const group = groups.find((rows) => rows.includes(name)) ?? [];
    const inTurn = group.filter((row) => selected.includes(row));
    steps.push(inTurn.length >= 2 ? inTurn : [name]);
  }
  return steps;
}
