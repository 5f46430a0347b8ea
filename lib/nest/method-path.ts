import { InvalidLockPathError } from '../core/errors';
import { validateLockPath } from '../core/paths';
import type { DistributedLockSpec } from './distributed-lock.options';
import { dig, resolveKeyTemplatePaths, TemplateRef } from './key-template';

/**
 * Resolves a decorated method's lock path from its arguments: `<orderId>` by parameter name,
 * `<0>` / `<0.orderId>` by position, or the function form called with the arguments.
 */
function validPath(path: unknown, spec: DistributedLockSpec): string {
  try {
    return validateLockPath(path as string);
  } catch (err) {
    const reason = err instanceof InvalidLockPathError ? err.reason : String(err);
    throw new InvalidLockPathError(String(path), `${reason} (lock path function of ${spec.where})`);
  }
}

export function resolveMethodPath(
  spec: DistributedLockSpec,
  args: readonly unknown[],
  names: readonly (string | undefined)[],
): string | string[] {
  if (spec.pathFn) {
    const result = spec.pathFn(...args) as string | string[];
    // Several paths: the method holds them all (multi-path lock).
    return Array.isArray(result) ? result.map((p) => validPath(p, spec)) : validPath(result, spec);
  }
  const template = spec.template!;
  const lookup = (ref: TemplateRef): unknown => {
    const [first, ...rest] = ref.segments;
    const index = /^\d+$/.test(first) ? Number(first) : names.indexOf(first);
    if (index === -1) {
      const known = names.filter(Boolean).join(', ') || 'none';
      throw new InvalidLockPathError(
        template.source,
        `${spec.where} has no parameter named "${first}" (parameters: ${known}); ` +
          'use a parameter name or a position such as <0>',
      );
    }
    return dig(args[index], rest);
  };
  return resolveKeyTemplatePaths(template, lookup, `the arguments of ${spec.where}`);
}
