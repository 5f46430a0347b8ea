// LockTelemetry: the client's events as OpenTelemetry metrics and spans, labelled by template;
// PathLabels: those labels; LockActivity: what the gauges count by label.
import type { EventEmitter } from 'node:events';
import type { Attributes, Meter, ObservableCallback, Tracer } from '@opentelemetry/api';
import type { LockEvents } from '../types';
import { loadOpenTelemetry, OpenTelemetry } from './open-telemetry-api';
import { InvalidLockOptionsError } from '../errors';
import { validateLockPath } from '../paths';

/** The meter's and tracer's name (the instrumentation scope). */
export const TELEMETRY_SCOPE = 'nestjs-zookeeper-lock';
/** The attribute holding the path template (never the concrete path: bounded cardinality). */
export const PATH_ATTRIBUTE = 'zk_lock.path';

/** Options of `LockTelemetry.attach()` (and of the module's `telemetry` option). */
export interface LockTelemetryOptions {
  /**
   * Templates of the paths your code locks directly (`'/locks/order:<id>'` for
   * `acquire('/locks/order:' + id)`): a path is labelled with the most literal template it
   * matches, else `'other'`. The NestJS module adds every `@DistributedLock` string template.
   */
  pathTemplates?: readonly string[];
  /** Default: the global one (`metrics.getMeterProvider()`, registered by your SDK). */
  meterProvider?: { getMeter(name: string): unknown };
  /** Default: the global one (`trace.getTracerProvider()`). */
  tracerProvider?: { getTracer(name: string): unknown };
  /**
   * The path template of the call locking now, asked in the caller's async context when the call
   * gave no `pathTemplate` (AcquireOptions). It labels the call's events when it is one of
   * `pathTemplates` and matches the path, so two templates matching one path keep their own calls.
   */
  callTemplate?: () => string | undefined;
}

type Listeners = { [E in keyof LockEvents]?: (payload: LockEvents[E]) => void };

/**
 * OpenTelemetry metrics and spans of one ZkLockClient, from its events (docs/design.md
 * "Telemetry", docs/guides/observability.md). Every attribute is bounded: the path template, the
 * outcome, the loss reason.
 */
export class LockTelemetry {
  /** @internal The path templates and their matching (the NestJS module lists the templates). */
  readonly labels: PathLabels;
  private readonly activity: LockActivity;
  /** The label each held path was counted under, for its release (maybe in another context). */
  private readonly heldLabels = new Map<string, { label: string; holds: number }>();
  private readonly listeners: Listeners;
  private readonly gauges: [{ removeCallback(cb: ObservableCallback): void }, ObservableCallback][];

  /** Undefined when `@opentelemetry/api` is not installed: then nothing is measured. */
  static attach(
    client: EventEmitter,
    options: LockTelemetryOptions = {},
  ): LockTelemetry | undefined {
    const labels = new PathLabels(options.pathTemplates);
    const api = loadOpenTelemetry();
    return api && new LockTelemetry(client, api, labels, options);
  }

  private constructor(
    private readonly client: EventEmitter,
    api: OpenTelemetry,
    labels: PathLabels,
    options: LockTelemetryOptions,
  ) {
    this.labels = labels;
    this.activity = new LockActivity(labels, options.callTemplate);
    const meter = (options.meterProvider ?? api.metrics.getMeterProvider()).getMeter(
      TELEMETRY_SCOPE,
    ) as Meter;
    const tracer = (options.tracerProvider ?? api.trace.getTracerProvider()).getTracer(
      TELEMETRY_SCOPE,
    ) as Tracer;
    const seconds = (ms: number) => ms / 1000;
    const { waitTime, holdTime, acquired, timeouts, lost, skipped, ...gauges } =
      createLockInstruments(meter);
    const at = (path: string, label = this.labelOf(path)): Attributes => ({
      [PATH_ATTRIBUTE]: label,
    });
    this.listeners = {
      waiting: this.activity.waiting,
      waited: (e) => {
        const label = this.labelOf(e.path, e.pathTemplate); // for its metrics and its span
        this.activity.change(label, 'waiters', -1);
        // A single try (waitTimeoutMs: 0, as onBusy 'skip' does) that found the lock taken is
        // 'busy', not a timeout: nobody waited.
        const outcome = isSingleTry(e.error) ? 'busy' : e.outcome;
        waitTime.record(seconds(e.waitMs), { ...at(e.path, label), 'zk_lock.outcome': outcome });
        if (e.outcome === 'busy') skipped.add(1, at(e.path, label)); // tryAcquire() gave null
        this.traceWait(api, tracer, e, at(e.path, label));
      },
      acquired: (e) => {
        if (e.reentrant) return;
        const label = this.holding(e.path, e.pathTemplate);
        acquired.add(1, at(e.path, label));
        this.activity.change(label, 'holders', 1);
      },
      released: (e) => {
        const label = this.released(e.path);
        holdTime.record(seconds(e.holdMs), at(e.path, label));
        this.activity.change(label, 'holders', -1);
      },
      timeout: (e) => {
        if (e.waitTimeoutMs > 0) timeouts.add(1, at(e.path, this.labelOf(e.path, e.pathTemplate)));
      },
      // A decorated method with onBusy 'skip'.
      skipped: (e) => skipped.add(1, at(e.path, this.labelOf(e.path, e.pathTemplate))),
      lost: (e) => {
        if (e.error.reason !== 'client-closed') {
          const label = this.heldLabels.get(e.path)?.label;
          lost.add(1, {
            ...at(e.path, label),
            'zk_lock.reason': e.error.reason,
            'zk_lock.session': e.session.index, // bounded: 0 to the sessions option - 1
          });
        }
      },
    };
    this.gauges = (['waiters', 'holders'] as const).map((what) => {
      const callback: ObservableCallback = (result) => {
        for (const [label, n] of this.activity.entries(what)) {
          result.observe(n, { [PATH_ATTRIBUTE]: label });
        }
      };
      gauges[what].addCallback(callback);
      return [gauges[what], callback];
    });
    for (const [event, listener] of Object.entries(this.listeners)) client.on(event, listener);
  }

  /** Stops measuring: removes the event listeners and the gauges' callbacks. Idempotent. */
  close(): void {
    for (const [event, listener] of Object.entries(this.listeners))
      this.client.off(event, listener);
    for (const [gauge, callback] of this.gauges.splice(0)) gauge.removeCallback(callback);
  }

  /** The label of `path` for the call locking now (LockActivity.labelOfCall). */
  private labelOf(path: string, pathTemplate?: string): string {
    return this.activity.labelOfCall(path, pathTemplate);
  }

  /** Counts a hold of `path` under the caller's label, remembered until its release. */
  private holding(path: string, pathTemplate?: string): string {
    const held = this.heldLabels.get(path);
    if (held) {
      held.holds++;
      return held.label;
    }
    const label = this.labelOf(path, pathTemplate);
    this.heldLabels.set(path, { label, holds: 1 });
    return label;
  }

  /** The label `path` was held under (its last hold is forgotten). */
  private released(path: string): string {
    const held = this.heldLabels.get(path);
    if (!held) return this.labelOf(path); // taken before telemetry was attached
    if (--held.holds === 0) this.heldLabels.delete(path);
    return held.label;
  }

  /** The span of one wait, in the caller's context, created at its end with its start time. */
  private traceWait(
    api: OpenTelemetry,
    tracer: Tracer,
    e: LockEvents['waited'],
    attributes: Attributes,
  ): void {
    const end = Date.now();
    const span = tracer.startSpan(
      'zk_lock.wait',
      {
        startTime: new Date(end - e.waitMs),
        attributes: { ...attributes, 'zk_lock.outcome': e.outcome },
      },
      api.context.active(),
    );
    // The error's name only: its message names the concrete path, which stays out of telemetry.
    if (e.error) span.setStatus({ code: api.SpanStatusCode.ERROR, message: e.error.name });
    span.end(new Date(end));
  }
}

/** A LockTimeoutError of a wait that was only a try (`waitTimeoutMs: 0`). */
function isSingleTry(error: unknown): boolean {
  return (error as { waitTimeoutMs?: unknown } | undefined)?.waitTimeoutMs === 0;
}

/** Histogram buckets of waits and holds, in seconds: 1 ms (a handoff) to 10 minutes (a job). */
const SECONDS_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

/** The instruments of docs/guides/observability.md (names, units and descriptions only here). */
function createLockInstruments(meter: Meter) {
  const seconds = (name: string, description: string) =>
    meter.createHistogram(name, {
      description,
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
  const counter = (name: string, description: string) => meter.createCounter(name, { description });
  const gauge = (name: string, description: string) =>
    meter.createObservableGauge(name, { description });
  return {
    waitTime: seconds(
      'zk_lock.wait.duration',
      'Time callers waited for a lock, by outcome (acquired, busy, timeout, aborted, failed)',
    ),
    holdTime: seconds(
      'zk_lock.hold.duration',
      'Time a lock was held, from its grant to its release',
    ),
    acquired: counter('zk_lock.acquired', 'Locks granted (re-entries not counted)'),
    timeouts: counter('zk_lock.timeouts', 'Waits that ended with LockTimeoutError'),
    lost: counter(
      'zk_lock.lost',
      'Held locks lost (session expired, connection lost, node deleted)',
    ),
    skipped: counter('zk_lock.skipped', 'Tries that found the lock busy: the caller skipped'),
    waiters: gauge('zk_lock.waiters', 'Callers of this process that wait for a lock'),
    holders: gauge('zk_lock.holders', 'Locks this process holds'),
  };
}

/** The label of lock paths that match no known template (one value: bounded cardinality). */
export const OTHER_PATHS_LABEL = 'other';

/** Most paths remembered with their label; the cache starts over beyond (memory stays bounded). */
const CACHE_LIMIT = 10_000;

interface Matcher {
  template: string;
  pattern: RegExp;
  /** Characters outside placeholders: the most literal template wins ('/a/b' over '/a/<x>'). */
  literal: number;
}

/**
 * Turns concrete lock paths ('/locks/order:42') into the bounded metric label: their template
 * ('/locks/order:<id>'), or OTHER_PATHS_LABEL. A placeholder stands for part of one segment
 * (docs/design.md "Paths and templates").
 */
export class PathLabels {
  private readonly matchers: Matcher[] = [];
  /** The same matchers by template: a call's own template is looked up, not searched for. */
  private readonly byTemplate = new Map<string, Matcher>();
  private readonly cache = new Map<string, string>();

  constructor(templates: Iterable<string> = []) {
    for (const template of templates) this.add(template);
  }

  /** Adds a template ('/locks/order:<id>'); throws InvalidLockOptionsError if it cannot be one. */
  add(template: string): void {
    if (this.byTemplate.has(template)) return;
    const matcher = compile(template);
    this.byTemplate.set(template, matcher);
    this.matchers.push(matcher);
    this.matchers.sort((a, b) => b.literal - a.literal);
    this.cache.clear();
  }

  get templates(): string[] {
    return this.matchers.map((m) => m.template);
  }

  /** Whether `path` is one of `template`'s paths (false for a template it was not given). */
  matches(template: string, path: string): boolean {
    return this.byTemplate.get(template)?.pattern.test(path) ?? false;
  }

  labelOf(path: string): string {
    let label = this.cache.get(path);
    if (label !== undefined) return label;
    label = this.matchers.find((m) => m.pattern.test(path))?.template ?? OTHER_PATHS_LABEL;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(path, label);
    return label;
  }
}

/**
 * @internal Waiters and holders of this process, by label: what the observable gauges report.
 * A wait is counted by the `waiting` listener here, with the label of its call (labelOfCall).
 */
export class LockActivity {
  private readonly byLabel = new Map<string, { waiters: number; holders: number }>();

  constructor(
    private readonly labels: PathLabels,
    private readonly callTemplate?: () => string | undefined,
  ) {}

  /** The client's `waiting` event: one more waiter under the call's label. */
  readonly waiting = (e: { path: string; pathTemplate?: string }): void =>
    this.change(this.labelOfCall(e.path, e.pathTemplate), 'waiters', 1);

  /**
   * The label of `path` for the call locking now: its template (the call's `pathTemplate`, else
   * the callTemplate option) if it is one of the templates and matches, else the best match.
   */
  labelOfCall(path: string, pathTemplate?: string): string {
    const template = pathTemplate ?? this.callTemplate?.();
    return template !== undefined && this.labels.matches(template, path)
      ? template
      : this.labels.labelOf(path);
  }

  change(label: string, what: 'waiters' | 'holders', delta: 1 | -1): void {
    let counts = this.byLabel.get(label);
    if (!counts) this.byLabel.set(label, (counts = { waiters: 0, holders: 0 }));
    // Never below 0: a lock taken before telemetry was attached may be released after.
    counts[what] = Math.max(0, counts[what] + delta);
  }

  /** Every label seen so far (a bounded set), with its current count; 0 once idle. */
  entries(what: 'waiters' | 'holders'): [string, number][] {
    return [...this.byLabel].map(([label, counts]) => [label, counts[what]]);
  }
}

const PLACEHOLDER = /<[^<>/]+>/g;

function compile(template: unknown): Matcher {
  const fail = (reason: string): never => {
    throw new InvalidLockOptionsError(
      'telemetry.pathTemplates',
      `${JSON.stringify(template)} ${reason}`,
      "Give lock path templates such as '/locks/order:<id>' (each <...> stands for one segment's value)",
    );
  };
  if (typeof template !== 'string') return fail('is not a string');
  const literals = template.split(PLACEHOLDER);
  if (literals.some((part) => /[<>]/.test(part))) fail('has an unbalanced "<" or ">"');
  try {
    validateLockPath(literals.join('x'));
  } catch {
    fail('does not give a valid lock path');
  }
  const escaped = literals.map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return {
    template,
    pattern: new RegExp(`^${escaped.join('[^/]+')}$`),
    literal: literals.join('').length,
  };
}
