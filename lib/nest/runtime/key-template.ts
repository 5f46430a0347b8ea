// Owns lock path templates: parsing (at decoration) and filling in values (at a call).
import { InvalidLockPathError } from '../../core/errors';
import { encodePathSegment, validateLockPath } from '../../core/paths';

/**
 * One `<...>` placeholder: `<id>` is ['id'], `<body.items.0.sku>` is ['body', 'items', '0', 'sku'].
 * A `*` part (`<items.*.productId>`) stands for every element of the array before it.
 */
export interface TemplateRef {
  raw: string;
  segments: string[];
}

export type TemplatePart = string | TemplateRef;

/** A parsed lock path template such as `/locks/order:<id>`. */
export interface KeyTemplate {
  source: string;
  parts: TemplatePart[];
  refs: TemplateRef[];
  /** The placeholder with a `*`, if any: the template gives one path per array element. */
  expanding?: TemplateRef;
}

/** Looks one placeholder up; `undefined` means missing. */
export type RefLookup = (ref: TemplateRef) => unknown;

const SEGMENT = /^(?:[A-Za-z_$][\w$-]*|\d+|\*)$/;

/**
 * Parses and checks a template once, when the decorator is applied: balanced `<` `>`, non-empty
 * dotted names, and a valid ZooKeeper path whatever the values turn out to be.
 */
export function parseKeyTemplate(source: string, where: string): KeyTemplate {
  const fail = (reason: string): never => {
    throw new InvalidLockPathError(source, `${reason} (template of ${where})`);
  };
  const parts: TemplatePart[] = [];
  const refs: TemplateRef[] = [];
  let i = 0;
  while (i < source.length) {
    const open = source.indexOf('<', i);
    const close = source.indexOf('>', i);
    if (close !== -1 && (open === -1 || close < open)) fail(`">" at index ${close} has no "<"`);
    if (open === -1) {
      parts.push(source.slice(i));
      break;
    }
    if (open > i) parts.push(source.slice(i, open));
    const end = source.indexOf('>', open + 1);
    if (end === -1) fail(`"<" at index ${open} is never closed with ">"`);
    const raw = source.slice(open + 1, end);
    if (raw.includes('<')) fail(`"<" at index ${open} is never closed before the next "<"`);
    if (raw.trim() === '') fail(`empty placeholder "<>" at index ${open}`);
    const segments = raw.split('.');
    const bad = segments.find((s) => !SEGMENT.test(s));
    if (bad !== undefined) {
      fail(`placeholder "<${raw}>" has an invalid name part "${bad}" (use letters, digits, _ $ -)`);
    }
    const ref = { raw, segments };
    if (segments.includes('*')) {
      if (segments[0] === '*') fail(`placeholder "<${raw}>" must name the array before "*"`);
      if (segments.indexOf('*') !== segments.lastIndexOf('*')) {
        fail(`placeholder "<${raw}>" has more than one "*" (one array per template)`);
      }
      if (refs.some((r) => r.segments.includes('*'))) {
        fail(`only one placeholder may contain "*" (one array per template); found "<${raw}>" too`);
      }
    }
    parts.push(ref);
    refs.push(ref);
    i = end + 1;
  }
  const sample = parts.map((p) => (typeof p === 'string' ? p : 'x')).join('');
  try {
    validateLockPath(sample);
  } catch (err) {
    fail(`it does not give a valid path: ${(err as InvalidLockPathError).reason}`);
  }
  return { source, parts, refs, expanding: refs.find((r) => r.segments.includes('*')) };
}

/**
 * The lock path(s) of a template: one path, or for a template with `<items.*.productId>` one
 * path per element of `items` (the decorated method then holds them all: the multi-path lock,
 * which sorts and de-duplicates them). The array must be non-empty and every element must
 * give a value; otherwise InvalidLockPathError, as for a missing value.
 */
export function resolveKeyTemplatePaths(
  template: KeyTemplate,
  lookup: RefLookup,
  where: string,
): string | string[] {
  const star = template.expanding;
  if (!star) return resolveKeyTemplate(template, lookup, where);
  const at = star.segments.indexOf('*');
  const head = star.segments.slice(0, at);
  const tail = star.segments.slice(at + 1);
  const list = lookup({ raw: head.join('.'), segments: head });
  const fail = (reason: string): never => {
    throw new InvalidLockPathError(template.source, `<${star.raw}> in ${where}: ${reason}`);
  };
  if (!Array.isArray(list)) {
    fail(`${head.join('.')} is ${list === undefined ? 'missing' : 'not an array'}; send a list`);
  }
  const elements = list as unknown[];
  if (elements.length === 0) fail(`${head.join('.')} is empty, so there is nothing to lock`);
  if (elements.length > MAX_EXPANDED_PATHS) {
    fail(
      `${head.join('.')} has ${elements.length} elements, more than ${MAX_EXPANDED_PATHS} locks ` +
        'at once; split the request',
    );
  }
  return elements.map((element, index) =>
    resolveKeyTemplate(
      template,
      (ref) => (ref === star ? dig(element, tail) : lookup(ref)),
      `${where} (element ${index} of ${head.join('.')})`,
    ),
  );
}

/** Upper bound on the paths one call may lock through a `*` template (one node per path). */
export const MAX_EXPANDED_PATHS = 100;

/**
 * Builds the lock path. Each value is encoded into ONE path segment (`../admin` cannot escape).
 * A missing value (undefined, null, '') or a non-scalar one throws InvalidLockPathError.
 */
export function resolveKeyTemplate(
  template: KeyTemplate,
  lookup: RefLookup,
  where: string,
): string {
  const path = template.parts
    .map((part) => {
      if (typeof part === 'string') return part;
      const value = lookup(part);
      if (value === undefined || value === null || value === '') {
        throw new InvalidLockPathError(
          template.source,
          `the value of <${part.raw}> is missing in ${where}; send it or fix the template`,
        );
      }
      if (typeof value === 'object' || typeof value === 'function' || typeof value === 'symbol') {
        throw new InvalidLockPathError(
          template.source,
          `the value of <${part.raw}> in ${where} is not a string or number; reference one of its fields`,
        );
      }
      try {
        return encodePathSegment(value);
      } catch {
        // The value itself is not shown: it cannot be printed (and came from outside).
        throw new InvalidLockPathError(
          template.source,
          `the value of <${part.raw}> in ${where} contains a lone UTF-16 surrogate; send well-formed text`,
        );
      }
    })
    .join('');
  return validateLockPath(path);
}

/** Walks own properties only (never `__proto__`, `constructor`...). */
export function dig(value: unknown, segments: readonly string[]): unknown {
  let current = value;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
