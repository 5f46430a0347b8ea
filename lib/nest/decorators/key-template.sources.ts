// Owns where each bare <name> of a template comes from, fixed at decoration.
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { InvalidLockPathError } from '../../core/errors';
import type { KeyTemplate } from './key-template';

/** The request parts a placeholder may name on a route handler: `<params.id>` and so on. */
export const REQUEST_SCOPES = ['params', 'query', 'body'] as const;

/** A route argument that is a whole payload: `@Body()` on HTTP, `@Payload()` on RPC and WS. */
const PAYLOAD_TYPE = 3;

/**
 * Where each bare `<name>` of a template comes from, fixed when the decorator is applied (never
 * chosen by what a request carries, so a client cannot steer it):
 * 1. the method's parameter of that name (or `<0>`: position), its value after pipes;
 * 2. the argument a parameter decorator binds to that name: `@Param('name')`, `@Query('name')`,
 *    `@Body('name')`, `@Payload('name')` (after pipes too);
 * 3. else a field of the method's whole `@Body()` / `@Payload()` argument.
 * A name none of these can give fails at once, naming the method.
 */
export interface TemplateSources {
  /** Bare name (first segment) -> argument index. */
  byName: Record<string, number>;
  /** Index of the whole `@Body()` / `@Payload()` argument, if the method has one. */
  payload?: number;
}

export function templateSources(
  template: KeyTemplate,
  owner: object,
  key: string | symbol,
  names: readonly (string | undefined)[],
  where: string,
): TemplateSources {
  const routeArgs: Record<string, { index: number; data?: unknown }> =
    Reflect.getMetadata(ROUTE_ARGS_METADATA, owner, key) ?? {};
  const bound: Record<string, number> = {};
  let payload: number | undefined;
  for (const [k, arg] of Object.entries(routeArgs)) {
    const type = Number(k.split(':')[0]);
    if (typeof arg.data === 'string') bound[arg.data] = arg.index;
    else if (type === PAYLOAD_TYPE && arg.data === undefined) payload = arg.index;
  }
  const byName: Record<string, number> = {};
  for (const ref of template.refs) {
    const [first, ...rest] = ref.segments;
    if ((REQUEST_SCOPES as readonly string[]).includes(first) && rest.length > 0) continue;
    if (/^\d+$/.test(first)) continue;
    const index = names.indexOf(first);
    if (index !== -1) byName[first] = index;
    else if (first in bound) byName[first] = bound[first];
    else if (payload === undefined) {
      const known = names.filter(Boolean).join(', ') || 'none';
      throw new InvalidLockPathError(
        template.source,
        `"<${ref.raw}>" names no parameter of ${where} (parameters: ${known}) and the method has ` +
          'no @Body()/@Payload() argument to read it from; use a parameter name, a position such ' +
          'as <0>, or name the request part on a route handler: <params.x>, <query.x>, <body.x>',
      );
    }
  }
  return { byName, payload };
}
