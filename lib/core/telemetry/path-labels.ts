// The labels of lock paths in metrics, and what the gauges count by label: the call's own
// template, else the best match; waiters and holders of this process.
import { InvalidLockOptionsError } from '../errors';
import { validateLockPath } from '../paths';

/** The label of lock paths that match no known template: one value, so cardinality stays bounded. */
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
 * Turns concrete lock paths ('/locks/order:42') into the bounded label of metrics: the path
 * template they were made from ('/locks/order:<id>'), or OTHER_PATHS_LABEL. A placeholder
 * stands for part of one segment, as template values are encoded into one segment
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
