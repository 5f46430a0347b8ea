// Owns lock path templates: their syntax, parsed and checked once when the decorator is applied.
import { InvalidLockPathError } from '../../core/errors';
import { validateLockPath } from '../../core/paths';

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
