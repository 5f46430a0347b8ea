import { dig, KeyTemplate, resolveKeyTemplatePaths, TemplateRef } from './key-template';

const SCOPES = ['params', 'query', 'body'] as const;

interface RequestLike {
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

/**
 * Resolves a template against an HTTP request: `<params.id>`, `<query.x>`, `<body.a.0.b>` name
 * their source; a bare `<id>` is looked up in route params, then query, then body.
 */
export function resolveRequestPath(
  template: KeyTemplate,
  request: RequestLike,
  where: string,
): string | string[] {
  const lookup = (ref: TemplateRef): unknown => {
    const [first, ...rest] = ref.segments;
    if (rest.length > 0 && (SCOPES as readonly string[]).includes(first)) {
      return dig(request[first as (typeof SCOPES)[number]], rest);
    }
    for (const scope of SCOPES) {
      const value = dig(request[scope], ref.segments);
      if (value !== undefined) return value;
    }
    return undefined;
  };
  return resolveKeyTemplatePaths(template, lookup, `the request to ${where} (params, query, body)`);
}
