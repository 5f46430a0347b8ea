// Owns the lock path of one call: a decorated method's template or function, filled from its call.
import { InvalidLockPathError } from '../../core/errors';
import { encodePathSegment, validateLockPath } from '../../core/paths';
import type { DistributedLockSpec } from '../decorators/distributed-lock.options';
import type { KeyTemplate, TemplateRef } from '../decorators/key-template';
import { REQUEST_SCOPES } from '../decorators/key-template.sources';

function validPath(path: unknown, spec: DistributedLockSpec): string {
  try {
    return validateLockPath(path as string);
  } catch (err) {
    const reason = err instanceof InvalidLockPathError ? err.reason : String(err);
    throw new InvalidLockPathError(String(path), `${reason} (lock path function of ${spec.where})`);
  }
}

/** The parts of an HTTP request a template may name: `<params.id>`, `<query.x>`, `<body.a.b>`. */
export interface RequestSources {
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

/**
 * Resolves a decorated method's lock path when it is called, from its arguments (after pipes)
 * by the sources fixed at decoration (key-template.sources.ts), `<0>` / `<0.orderId>` by position,
 * `<params.x>` / `<query.x>` / `<body.x>` from the request of a route handler call, or the
 * function form called with the arguments.
 */
export function resolveMethodPath(
  spec: DistributedLockSpec,
  args: readonly unknown[],
  request?: RequestSources,
): string | string[] {
  const names = spec.parameterNames;
  if (spec.pathFn) {
    const result = spec.pathFn(...args) as string | string[];
    // Several paths: the method holds them all (multi-path lock).
    return Array.isArray(result) ? result.map((p) => validPath(p, spec)) : validPath(result, spec);
  }
  const template = spec.template!;
  const sources = spec.sources ?? { byName: {} };
  const lookup = (ref: TemplateRef): unknown => {
    const [first, ...rest] = ref.segments;
    if (rest.length > 0 && (REQUEST_SCOPES as readonly string[]).includes(first)) {
      if (request) return dig(request[first as keyof RequestSources], rest);
      if (!names.includes(first)) {
        throw new InvalidLockPathError(
          template.source,
          `"<${ref.raw}>" reads the HTTP request, but ${spec.where} was not called as a route ` +
            'handler; name a parameter of the method instead',
        );
      }
    }
    if (/^\d+$/.test(first)) return dig(args[Number(first)], rest);
    const index = sources.byName[first] ?? names.indexOf(first);
    if (index !== -1) return dig(args[index], rest);
    if (sources.payload !== undefined) return dig(args[sources.payload], ref.segments);
    const known = names.filter(Boolean).join(', ') || 'none';
    throw new InvalidLockPathError(
      template.source,
      `${spec.where} has no parameter named "${first}" (parameters: ${known}); ` +
        'use a parameter name or a position such as <0>',
    );
  };
  const from = request
    ? `the arguments of ${spec.where} and its request`
    : `the arguments of ${spec.where}`;
  return resolveKeyTemplatePaths(template, lookup, from);
}

/** Looks one placeholder up; `undefined` means missing. */
export type RefLookup = (ref: TemplateRef) => unknown;

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
 * A missing value (undefined, null, '') or a non-scalar one throws InvalidLockPathError: the
 * values encodePathSegment refuses, with messages that name the placeholder.
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
