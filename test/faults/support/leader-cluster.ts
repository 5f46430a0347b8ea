/**
 * The leader-election proof's harness: app instances (fixtures/leader.app.ts) as
 * OS processes, one fenced register (fenced-register.ts) they all write to, and what each
 * instance reported (granted, aborted, revoked, cron firings) on the one monotonic clock.
 * Instances live in slots: a slot's instance can be killed, stopped, paused and replaced by a new
 * one (a new participant id, as a restarted pod gets).
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { scaled } from '../../support/time-scale';
import { AppInstance, waitUntil } from './app-instance';
import { FencedRegister, monotonicMs } from './fenced-register';
import { registerViolations, Tenure, tenureViolations, Violation } from './leadership-detector';

export interface ClusterOptions {
  connectionString: string;
  /** One election for every slot, or one per slot (a deliberately broken run). */
  electionPath: string | string[];
  sessionMs: number;
  /** Offsets of the slots' wall clocks (shifted-clock.ts); 0 for every slot by default. */
  clockOffsetsMs?: number[];
  writeEveryMs?: number;
}

/** What an instance reported (`type`: granted, aborted, revoked, tick, closing, closed...). */
export interface Report {
  participant: string;
  type: string;
  at: number;
  [key: string]: unknown;
}

export class LeaderCluster {
  readonly register = new FencedRegister();
  readonly reports: Report[] = [];
  /** The instance in each slot now. */
  readonly slots: AppInstance[] = [];
  /** Every instance started, in order. */
  readonly instances: AppInstance[] = [];
  private readonly generations: number[] = [];

  constructor(private readonly options: ClusterOptions) {}

  /** Starts one instance per slot and waits until all have joined their election. */
  async start(count = 3): Promise<void> {
    await Promise.all(Array.from({ length: count }, (_, slot) => this.startSlot(slot)));
  }

  /** A new instance (a new participant) in `slot`, ready. */
  async startSlot(slot: number): Promise<AppInstance> {
    const generation = (this.generations[slot] = (this.generations[slot] ?? 0) + 1);
    const participant = `app${slot + 1}.${generation}`;
    const { electionPath } = this.options;
    const child = fork(join(__dirname, '..', 'fixtures', 'leader.app.ts'), [], {
      execArgv: ['-r', require.resolve('ts-node/register/transpile-only')],
      env: {
        ...process.env,
        TS_NODE_PROJECT: join(__dirname, '..', '..', '..', 'tsconfig.json'),
        ZK_CONNECT: this.options.connectionString,
        ELECTION_PATH: typeof electionPath === 'string' ? electionPath : electionPath[slot],
        PARTICIPANT: participant,
        SESSION_MS: String(this.options.sessionMs),
        WRITE_EVERY_MS: String(this.options.writeEveryMs ?? 100),
        CLOCK_OFFSET_MS: String(this.options.clockOffsetsMs?.[slot] ?? 0),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const instance = new AppInstance(participant, child, (m) => this.onMessage(participant, m));
    this.slots[slot] = instance;
    this.instances.push(instance);
    await instance.ready;
    return instance;
  }

  private onMessage(participant: string, m: Record<string, unknown>): void {
    if (m.type === 'write') {
      this.register.write({
        participant,
        token: BigInt(m.token as string),
        kind: String(m.kind),
        believedLeader: m.believedLeader as boolean,
        sentAt: m.sentAt as number,
        label: m.label as number | undefined,
        note: m.note as string | undefined,
      });
    } else {
      this.reports.push({ ...m, participant, type: String(m.type), at: m.at as number });
    }
  }

  /** The reports of `type` (of one participant), optionally only after `since`. */
  reportsOf(type: string, participant?: string, since = -Infinity): Report[] {
    return this.reports.filter(
      (r) => r.type === type && (!participant || r.participant === participant) && r.at >= since,
    );
  }

  /**
   * Each leadership as its instance reported it: from `granted` until the first of its signal's
   * abort, the revoked hook, or the process's death.
   */
  tenures(): Tenure[] {
    const out: Tenure[] = [];
    for (const granted of this.reports.filter((r) => r.type === 'granted')) {
      const instance = this.instances.find((i) => i.participant === granted.participant);
      const ends = this.reports
        .filter(
          (r) =>
            r.participant === granted.participant &&
            (r.type === 'aborted' || r.type === 'revoked') &&
            r.at >= granted.at,
        )
        .map((r) => r.at);
      const death = instance?.killedAt ?? instance?.exitedAt;
      if (death !== undefined) ends.push(death);
      out.push({
        participant: granted.participant,
        token: BigInt(granted.token as string),
        from: granted.at,
        to: ends.length ? Math.min(...ends) : undefined,
      });
    }
    return out;
  }

  /** The participant leading now by its own reports (an open tenure of a live instance). */
  leader(): AppInstance | undefined {
    const open = this.tenures().filter((t) => t.to === undefined);
    return this.instances.find((i) => i.alive && open.some((t) => t.participant === i.participant));
  }

  /** Every violation the detectors find so far. */
  violations(): Violation[] {
    return [
      ...registerViolations(this.register.log),
      ...tenureViolations(this.tenures(), monotonicMs()),
    ];
  }

  /**
   * Waits until exactly one live instance leads, every live one names it as the leader (a paused
   * instance answers nothing and is not asked),
   * and the register has accepted `writes` more of its writes; returns it.
   */
  async oneLeader(what: string, writes = 3, timeoutMs = scaled(60_000)): Promise<AppInstance> {
    let leader: AppInstance | undefined;
    let last = '';
    await waitUntil(
      what,
      async () => {
        const live = this.instances.filter((i) => i.alive && !i.paused);
        const answers = await Promise.all(
          live.map((i) =>
            i
              .request('who')
              .catch((err: Error): Record<string, unknown> => ({ error: err.message })),
          ),
        );
        last = JSON.stringify(live.map((i, n) => [i.participant, answers[n]]));
        const leading = live.filter((_, n) => answers[n].isLeader === true);
        if (leading.length !== 1) return false;
        leader = leading[0];
        return answers.every((a) => a.leader === leader!.participant);
      },
      timeoutMs,
      () => last,
    );
    const from = this.register.log.length;
    await waitUntil(
      `${what}: ${writes} writes of ${leader!.participant} accepted`,
      () =>
        this.register.log.filter(
          (e) => e.seq >= from && e.accepted && e.participant === leader!.participant,
        ).length >= writes,
      timeoutMs,
    );
    return leader!;
  }

  /** Waits for a `granted` report of another participant than `than` after `since`. */
  async nextGrant(since: number, than: string, timeoutMs = scaled(60_000)): Promise<Report> {
    let grant: Report | undefined;
    await waitUntil(
      `a participant other than ${than} granted leadership`,
      () =>
        !!(grant = this.reportsOf('granted', undefined, since).find((r) => r.participant !== than)),
      timeoutMs,
    );
    return grant!;
  }

  /** SIGKILLs every instance still running (after a test, whatever happened). */
  async kill(): Promise<void> {
    await Promise.all(this.instances.map((i) => i.kill()));
  }

  /** SIGTERMs every instance; returns the participants that did not end by themselves. */
  async stop(): Promise<string[]> {
    const ended = await Promise.all(this.instances.map((i) => i.stop()));
    return this.instances.filter((_, n) => !ended[n]).map((i) => i.participant);
  }
}
