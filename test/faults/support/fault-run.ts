/**
 * The fault suite's harness: contender processes (fixtures/fault-contender.ts) and the fenced
 * store they write to, with the detectors that decide pass/fail.
 *
 * The store keeps, per lock path, a value, the newest fencing token that claimed it, and the
 * count of accepted writes. A `read` claims the path with the reader's token; a `write` is
 * refused when an older token than the newest claim tries it (a stale holder), and counted as a
 * lost update when the value changed since the writer read it (two writers in the section).
 * Detectors: overlapping accepted sections on the shared monotonic clock (process.hrtime is
 * CLOCK_MONOTONIC, the same in every process of the machine), lost updates, and a final value
 * that differs from the number of accepted writes.
 */
import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { scaled } from '../../support/time-scale';

export type Phase = 'before' | 'during' | 'after';

export interface FaultRunOptions {
  connectionString: string;
  processes?: number;
  paths: string[];
  sessionMs: number;
  waitMs: number;
  noLock?: boolean;
  /**
   * Each contender's client option `sessions`; left out, the client's default (CLIENT_DEFAULTS),
   * as users run it.
   */
  sessions?: number;
}

/** A lock one contender's client told it was lost (its `lost` event). */
export interface LostReport {
  worker: number;
  path: string;
  /** The index of the session the lock was on. */
  session: number;
  reason: string;
}

/** One session of a contender's client changed state (its `session` event). */
export interface SessionReport {
  worker: number;
  index: number;
  state: string;
}

/** A path a contender holds in a section the harness asked for, and that section's report. */
export interface HeldSection {
  path: string;
  token: string;
  op: Promise<Record<string, unknown>>;
}

interface Op {
  worker: number;
  phase: Phase;
  path: string;
  token?: string;
  start?: bigint;
  end?: bigint;
  result: string;
  signalAborted?: boolean;
  /** A failed wait: how long it waited. */
  waitedMs?: number;
}

interface PathState {
  value: number;
  newestClaim: bigint;
  accepted: number;
}

export interface FaultReport {
  okByPhase: Record<Phase, number>;
  outcomes: Record<string, number>;
  staleRefused: number;
  lostUpdates: number;
  overlaps: number;
  valueMismatches: number;
}

export class FaultRun {
  phase: Phase = 'before';
  readonly ops: Op[] = [];
  readonly workers: ChildProcess[] = [];
  /** Each contender's number of sessions, as its client reported when ready. */
  readonly sessions: number[] = [];
  readonly lost: LostReport[] = [];
  readonly sessionChanges: SessionReport[] = [];
  /** How each contender ended: `code` 0 and no `signal` when it closed and exited by itself. */
  readonly exits: { code: number | null; signal: string | null }[] = [];
  private readonly store = new Map<string, PathState>();
  private lostUpdates = 0;
  private staleRefused = 0;
  private readonly listeners = new Set<(worker: number, m: Record<string, unknown>) => void>();

  constructor(private readonly options: FaultRunOptions) {}

  async start(): Promise<void> {
    const count = this.options.processes ?? 4;
    for (let i = 0; i < count; i++) this.workers.push(this.spawn(i));
    const ready = await Promise.all(
      this.workers.map((w, i) => this.next(i, (m) => m.type === 'ready')),
    );
    ready.forEach((m, i) => (this.sessions[i] = Number(m.sessions)));
  }

  get paths(): string[] {
    return this.options.paths;
  }

  /**
   * Asks `worker` to take every lock path in its next section (one lock per path: one on each of
   * its sessions when the paths spread over them) and to hold them as `command` says
   * ('pause-in-section', 'linger' or 'block'); resolves once it holds them, with each path's
   * token and the report of its section when it ends.
   */
  async holdEveryPath(worker: number, command: Record<string, unknown>): Promise<HeldSection[]> {
    const inSection = this.next(worker, (m) => m.type === 'in-section');
    this.workers[worker].send({ ...command, all: true });
    const held = (await inSection).held as { path: string; token: string }[];
    return held.map(({ path, token }) => ({
      path,
      token,
      op: this.next(
        worker,
        (m) => m.type === 'op' && m.path === path && m.token === token,
        scaled(300_000),
      ),
    }));
  }

  /** Resolves with the next message of `worker` that matches. */
  next(
    worker: number,
    match: (m: Record<string, unknown>) => boolean,
    timeoutMs = scaled(120_000),
  ): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`worker ${worker}: no matching message within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (from: number, m: Record<string, unknown>): void => {
        if (from !== worker || !match(m)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(m);
      };
      this.listeners.add(listener);
    });
  }

  /** Accepted critical sections so far in `phase`. */
  ok(phase: Phase = this.phase): number {
    return this.ops.filter((op) => op.phase === phase && op.result === 'ok').length;
  }

  /** Waits until `count` more sections have been accepted than now. */
  async progress(count: number, what: string, timeoutMs = scaled(120_000)): Promise<void> {
    const target = this.ops.filter((op) => op.result === 'ok').length + count;
    const deadline = Date.now() + timeoutMs;
    while (this.ops.filter((op) => op.result === 'ok').length < target) {
      if (Date.now() > deadline) {
        throw new Error(
          `${what}: fewer than ${count} accepted sections in ${timeoutMs} ms; ${this.summary()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Asks every worker to finish its section and close; kills what does not exit in time. */
  async stop(): Promise<void> {
    const exits = this.workers.map((w) => exited(w));
    for (const w of this.workers) {
      if (w.connected) w.send({ type: 'stop' });
    }
    const timer = setTimeout(() => this.kill(), scaled(60_000));
    await Promise.all(exits);
    clearTimeout(timer);
  }

  kill(): void {
    for (const w of this.workers) {
      w.kill('SIGCONT');
      w.kill('SIGKILL');
    }
  }

  report(): FaultReport {
    const okByPhase: Record<Phase, number> = { before: 0, during: 0, after: 0 };
    const outcomes: Record<string, number> = {};
    for (const op of this.ops) {
      outcomes[op.result] = (outcomes[op.result] ?? 0) + 1;
      if (op.result === 'ok') okByPhase[op.phase]++;
    }
    let valueMismatches = 0;
    for (const state of this.store.values()) {
      if (state.value !== state.accepted) valueMismatches++;
    }
    return {
      okByPhase,
      outcomes,
      staleRefused: this.staleRefused,
      lostUpdates: this.lostUpdates,
      overlaps: this.overlaps(),
      valueMismatches,
    };
  }

  summary(): string {
    return JSON.stringify(this.report());
  }

  /** Accepted sections of one path that overlap in time (each pair counted once). */
  private overlaps(): number {
    let count = 0;
    const byPath = new Map<string, Op[]>();
    for (const op of this.ops) {
      if (op.result !== 'ok' || op.start === undefined) continue;
      byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
    }
    for (const ops of byPath.values()) {
      ops.sort((a, b) => (a.start! < b.start! ? -1 : a.start! > b.start! ? 1 : 0));
      let latestEnd = -1n;
      for (const op of ops) {
        if (op.start! < latestEnd) count++;
        if (op.end! > latestEnd) latestEnd = op.end!;
      }
    }
    return count;
  }

  private spawn(index: number): ChildProcess {
    const child = fork(join(__dirname, '..', 'fixtures', 'fault-contender.ts'), [], {
      execArgv: ['-r', require.resolve('ts-node/register/transpile-only')],
      env: {
        ...process.env,
        TS_NODE_PROJECT: join(__dirname, '..', '..', '..', 'tsconfig.json'),
        ZK_CONNECT: this.options.connectionString,
        LOCK_PATHS: this.options.paths.join(','),
        SESSION_MS: String(this.options.sessionMs),
        WAIT_MS: String(this.options.waitMs),
        NO_LOCK: this.options.noLock ? '1' : '0',
        SESSIONS: this.options.sessions === undefined ? '' : String(this.options.sessions),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (m: Record<string, unknown>) => this.onMessage(index, child, m));
    child.on('exit', (code, signal) => (this.exits[index] = { code, signal }));
    return child;
  }

  private onMessage(index: number, child: ChildProcess, m: Record<string, unknown>): void {
    if (m.type === 'read' || m.type === 'write') {
      const reply = m.type === 'read' ? this.read(m) : this.write(m);
      if (child.connected) child.send({ id: m.id, ...reply });
      return;
    }
    if (m.type === 'op') {
      this.ops.push({
        worker: index,
        phase: this.phase,
        path: String(m.path),
        token: m.token as string | undefined,
        start: m.start === undefined ? undefined : BigInt(m.start as string),
        end: m.end === undefined ? undefined : BigInt(m.end as string),
        result: String(m.result),
        signalAborted: m.signalAborted as boolean | undefined,
        waitedMs: m.waitedMs as number | undefined,
      });
    } else if (m.type === 'lost') {
      const { path, session, reason } = m as { path: string; session: number; reason: string };
      this.lost.push({ worker: index, path, session, reason });
    } else if (m.type === 'session') {
      this.sessionChanges.push({ worker: index, index: Number(m.index), state: String(m.state) });
    }
    for (const listener of [...this.listeners]) listener(index, m);
  }

  private state(path: string): PathState {
    let state = this.store.get(path);
    if (!state) this.store.set(path, (state = { value: 0, newestClaim: -1n, accepted: 0 }));
    return state;
  }

  private read(m: Record<string, unknown>): Record<string, unknown> {
    const state = this.state(String(m.path));
    const token = BigInt(m.token as string);
    if (token > state.newestClaim) state.newestClaim = token;
    return { value: state.value };
  }

  private write(m: Record<string, unknown>): Record<string, unknown> {
    const state = this.state(String(m.path));
    const token = BigInt(m.token as string);
    if (token < state.newestClaim) {
      this.staleRefused++;
      return { result: 'stale-refused' };
    }
    const value = Number(m.value);
    if (value !== state.value + 1) this.lostUpdates++;
    state.value = value;
    state.accepted++;
    return { result: 'ok' };
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}
