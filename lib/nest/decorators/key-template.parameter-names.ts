// Owns reading a function's parameter names from its source text.
/**
 * Names of a function's parameters, read from its source text: `(id, { a }, qty = 1, ...rest)`
 * gives ['id', undefined, 'qty', 'rest']. Destructured parameters have no name (use `<1.a>`).
 */
export function parameterNames(fn: (...args: any[]) => unknown): (string | undefined)[] {
  const source = stripComments(Function.prototype.toString.call(fn));
  const list = parameterList(source);
  if (list === undefined || list.trim() === '') return [];
  return splitTopLevel(list).map((param) => {
    const match = /^\s*(?:\.\.\.)?\s*([A-Za-z_$][\w$]*)\s*(?:=|$)/.exec(param);
    return match ? match[1] : undefined;
  });
}

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
}

/** The text between the first "(" and its matching ")", or the single arrow parameter. */
function parameterList(source: string): string | undefined {
  const open = source.indexOf('(');
  const arrow = /^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(source);
  if (arrow && (open === -1 || arrow.index + arrow[0].length < open)) return arrow[1];
  if (open === -1) return undefined;
  let list: string | undefined;
  scanTopLevel(source, open, (c, i, depth) => {
    if (depth !== 0 || !CLOSE.includes(c)) return false;
    list = source.slice(open + 1, i);
    return true;
  });
  return list;
}

/** Splits on commas that are not inside brackets or strings. */
function splitTopLevel(list: string): string[] {
  const out: string[] = [];
  let start = 0;
  scanTopLevel(list, 0, (c, i, depth) => {
    if (c === ',' && depth === 0) {
      out.push(list.slice(start, i));
      start = i + 1;
    }
    return false;
  });
  const last = list.slice(start);
  if (last.trim() !== '') out.push(last);
  return out;
}

const OPEN = '([{';
const CLOSE = ')]}';

/**
 * Walks `text` from `from`, skipping string literals, and calls `visit` with every other
 * character and the bracket depth after it, until `visit` returns true.
 */
function scanTopLevel(
  text: string,
  from: number,
  visit: (c: string, i: number, depth: number) => boolean,
): void {
  let depth = 0;
  let quote: string | undefined;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if (OPEN.includes(c)) depth++;
    else if (CLOSE.includes(c)) depth--;
    if (visit(c, i, depth)) return;
  }
}
