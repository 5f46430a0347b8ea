/**
 * The fenced register of the leader-election proof: the one resource every leader
 * writes to, with its leadership's fencing token. It accepts a write only when the token is at
 * least the highest it has accepted (docs/design.md "Fencing tokens"), and records every write,
 * accepted or refused, in arrival order, for the detector (leadership-detector.ts).
 *
 * It lives in the test process; the app instances write to it over their IPC channel. Times are
 * milliseconds of CLOCK_MONOTONIC (process.hrtime), one clock for every process of the machine.
 */

/** One write as a leader sends it. */
export interface RegisterWrite {
  participant: string;
  token: bigint;
  /** 'work' (the leader's loop), 'job' (a long job's write), 'cron' (the @Cron job). */
  kind: string;
  /** The writer's leadership signal had not aborted when it sent the write. */
  believedLeader: boolean;
  /** When the writer sent it (monotonic ms). */
  sentAt: number;
  /** The cron firing's second by the writer's own (offset) clock. */
  label?: number;
  /** Tells one write apart (e.g. the long job's). */
  note?: string;
}

/** One write as the register saw it. */
export interface RegisterEntry extends RegisterWrite {
  /** Arrival order. */
  seq: number;
  /** When the register received it (monotonic ms). */
  at: number;
  accepted: boolean;
}

export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export class FencedRegister {
  readonly log: RegisterEntry[] = [];
  private highest = -1n;

  write(write: RegisterWrite): RegisterEntry {
    const accepted = write.token >= this.highest;
    if (accepted) this.highest = write.token;
    const entry = { ...write, seq: this.log.length, at: monotonicMs(), accepted };
    this.log.push(entry);
    return entry;
  }

  accepted(): RegisterEntry[] {
    return this.log.filter((e) => e.accepted);
  }

  /** The participants whose writes the register accepted, in order of their first one. */
  writers(since = 0): string[] {
    return [
      ...new Set(this.log.filter((e) => e.accepted && e.seq >= since).map((e) => e.participant)),
    ];
  }
}
