/**
 * The detectors of the leader-election proof (leader-election.faults-spec.ts). Pure functions over what the fenced
 * register recorded (fenced-register.ts) and what the instances reported; the scenarios decide
 * pass/fail with them, and leadership-detector.spec.ts plus a deliberately broken run show they
 * can fail.
 *
 * On the register's log:
 * - `token-went-down`: an accepted write whose token is below one accepted before (the register
 *   itself would be broken);
 * - `token-shared`: two participants' writes accepted with one token (two leaderships with one
 *   token: the token does not tell leaders apart);
 * - `interleaved`: a participant's writes under one token accepted again after another
 *   participant's write was accepted (two leaders acting at once);
 * - `stale-believer`: a write refused although its writer still believed it led (its signal had
 *   not aborted): another participant led meanwhile. Only a paused leader may do this, with the
 *   writes it sends on waking before its signal aborts; the scenario that pauses one allows them
 *   for that participant, every other scenario allows none.
 * On the instances' reports of their tenures (granted until the signal aborted, the hook said
 * revoked, or the process died): `overlap`, two participants' tenures overlapping in time;
 * `token-not-greater`, a tenure granted with a token not above the one granted before it.
 */
import { RegisterEntry } from './fenced-register';

export type ViolationKind =
  | 'token-went-down'
  | 'token-shared'
  | 'interleaved'
  | 'stale-believer'
  | 'overlap'
  | 'token-not-greater';

export interface Violation {
  kind: ViolationKind;
  participant: string;
  detail: string;
}

/** One leadership of one participant, as the instance reported it (monotonic ms). */
export interface Tenure {
  participant: string;
  token: bigint;
  from: number;
  /** When it ended; undefined while it lasts. */
  to?: number;
}

export function registerViolations(log: readonly RegisterEntry[]): Violation[] {
  const found: Violation[] = [];
  const ownerOf = new Map<bigint, string>();
  /** Runs (participant + token) that another participant's accepted write has ended. */
  const ended = new Set<string>();
  let highest: bigint | undefined;
  let current: string | undefined;
  for (const e of log) {
    const where = `write #${e.seq} (${e.kind}, token ${e.token})`;
    if (!e.accepted) {
      if (e.believedLeader) {
        found.push({
          kind: 'stale-believer',
          participant: e.participant,
          detail: `${where} refused while ${e.participant} believed it led`,
        });
      }
      continue;
    }
    if (highest !== undefined && e.token < highest) {
      found.push({
        kind: 'token-went-down',
        participant: e.participant,
        detail: `${where} accepted after token ${highest}`,
      });
    }
    const owner = ownerOf.get(e.token);
    if (owner !== undefined && owner !== e.participant) {
      found.push({
        kind: 'token-shared',
        participant: e.participant,
        detail: `${where} accepted, and ${owner}'s writes with the same token`,
      });
    }
    const run = `${e.participant} ${e.token}`;
    if (ended.has(run)) {
      found.push({
        kind: 'interleaved',
        participant: e.participant,
        detail: `${where} accepted after another participant's accepted writes`,
      });
    }
    if (current !== undefined && current !== run) ended.add(current);
    current = run;
    ownerOf.set(e.token, owner ?? e.participant);
    if (highest === undefined || e.token > highest) highest = e.token;
  }
  return found;
}

export function tenureViolations(tenures: readonly Tenure[], now: number): Violation[] {
  const found: Violation[] = [];
  const sorted = [...tenures].sort((a, b) => a.from - b.from);
  for (let i = 0; i < sorted.length; i++) {
    const [before, tenure] = [sorted[i - 1], sorted[i]];
    if (before && tenure.token <= before.token) {
      found.push({
        kind: 'token-not-greater',
        participant: tenure.participant,
        detail: `${tenure.participant} granted token ${tenure.token} after ${before.participant}'s ${before.token}`,
      });
    }
    for (let j = i + 1; j < sorted.length; j++) {
      const [a, b] = [sorted[i], sorted[j]];
      if (a.participant === b.participant) continue;
      if (b.from < (a.to ?? now)) {
        found.push({
          kind: 'overlap',
          participant: b.participant,
          detail:
            `${b.participant} led (token ${b.token}) from ${b.from.toFixed(1)} ms while ` +
            `${a.participant} (token ${a.token}) led until ${a.to?.toFixed(1) ?? 'now'}`,
        });
      }
    }
  }
  return found;
}

/** The violations of `kind` only, for one-line assertions. */
export const ofKind = (found: readonly Violation[], kind: ViolationKind): Violation[] =>
  found.filter((v) => v.kind === kind);
