// Owns the lock path of one call: a decorated method's template or function, filled from its call.
import { InvalidLockPathError } from '../../core/errors';
import { validateLockPath } from '../../core/paths';
import type { DistributedLockSpec } from '../decorators/distributed-lock.options';
import { dig, resolveKeyTemplatePaths, TemplateRef } from './key-template';
import { REQUEST_SCOPES } from './key-template.sources';

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
