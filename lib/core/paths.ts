// Lock paths: their validation (ZooKeeper's rules and our length limit), namespaces, segments.
import { InvalidLockPathError } from './errors';

// ZooKeeper's PathUtils.validatePath: control characters, surrogate/private-use block, specials.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\uD800-\uF8FF\uFFF0-\uFFFF]/;

/**
 * The longest lock path in UTF-8 bytes, namespace included (docs/design.md "Paths and
 * templates"): every lock request names its path, and a server drops the connection on one over
 * `jute.maxbuffer` (1 MB default). 4 KB (PATH_MAX) keeps requests 250 times below that, and a
 * listing of the parent still holds 250 such siblings.
 */
export const MAX_LOCK_PATH_BYTES = 4096;

/** Throws InvalidLockPathError unless `path` is a valid absolute ZooKeeper path for a lock. */
export function validateLockPath(path: unknown): string {
  if (typeof path !== 'string')
    throw new InvalidLockPathError(
      textOf(path) ?? Object.prototype.toString.call(path),
      'a lock path must be a string',
    );
  if (!path.startsWith('/')) throw new InvalidLockPathError(path, 'it must start with "/"');
  if (path === '/')
    throw new InvalidLockPathError(path, 'the root "/" cannot be a lock; use e.g. "/locks/name"');
  if (path.endsWith('/')) throw new InvalidLockPathError(path, 'it must not end with "/"');
  checkLength(path);
  const bad = FORBIDDEN.exec(path);
  if (bad) {
    const code = bad[0].charCodeAt(0).toString(16).padStart(4, '0');
    throw new InvalidLockPathError(
      path,
      `character U+${code} at index ${bad.index} is not allowed by ZooKeeper`,
    );
  }
  // An empty, "." or ".." segment: a "/" followed by at most two dots, then "/" or the end.
  const relative = BAD_SEGMENT.exec(path);
  if (relative) {
    const segment = relative[1];
    if (segment === '') throw new InvalidLockPathError(path, 'it contains an empty segment ("//")');
    throw new InvalidLockPathError(path, `relative segment "${segment}" is not allowed`);
  }
  return path;
}

const BAD_SEGMENT = /\/(\.{0,2})(?=\/|$)/;

/** Prefixes the namespace (itself a valid path, e.g. "/my-app") to a lock path. */
export function applyNamespace(namespace: string | undefined, path: string): string {
  validateLockPath(path);
  return withNamespace(namespace, path);
}

/**
 * applyNamespace for a `path` validated already (a resolved `@DistributedLock` template): only
 * the namespace and the length of both are checked.
 */
function withNamespace(namespace: string | undefined, path: string): string {
  if (!namespace) return path;
  if (namespace !== checkedNamespace) checkedNamespace = validateLockPath(namespace);
  return checkLength(namespace + path, path);
}

/** InvalidLockPathError for a path over MAX_LOCK_PATH_BYTES; `shown` is the caller's path. */
function checkLength(full: string, shown = full): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most paths need no count at all.
  if (full.length * 3 <= MAX_LOCK_PATH_BYTES) return full;
  const bytes = Buffer.byteLength(full, 'utf8');
  if (bytes <= MAX_LOCK_PATH_BYTES) return full;
  throw new InvalidLockPathError(
    shown,
    `it is ${bytes} bytes long (UTF-8${full === shown ? '' : ', namespace included'}), over the ` +
      `limit of ${MAX_LOCK_PATH_BYTES} bytes: ZooKeeper drops the connection on a request ` +
      'longer than its jute.maxbuffer. Use a shorter key (e.g. a hash of a long value)',
  );
}

/** The last namespace validated (a client applies the same one to every path). */
let checkedNamespace: string | undefined;

/**
 * Encodes an untrusted value (an order id) so it stays inside ONE path segment: no "/", no "." or
 * ".." segment, no character ZooKeeper forbids; "42" stays "42", "a/b" becomes "a%2Fb". A string,
 * number, bigint or boolean is its text, and so is an object with a text of its own (a MongoDB
 * ObjectId, a Date, a URL). A missing value (undefined, null, "") or any other (a plain object,
 * an array, a function, a symbol) throws InvalidLockPathError: as "undefined" or
 * "[object Object]" every request without the value would share one lock.
 */
export function encodePathSegment(value: unknown): string {
  if (value === undefined || value === null || value === '') {
    throw new InvalidLockPathError(
      String(value),
      `a lock path value is missing (${value === '' ? 'an empty string' : String(value)}); ` +
        'send a non-empty string or a number for it',
    );
  }
  const text = ownText(value);
  if (text === undefined) {
    throw new InvalidLockPathError(
      Object.prototype.toString.call(value),
      'a lock path value must be a string or a number (a boolean, a bigint or an object with a ' +
        `text of its own, such as an ObjectId, also works), got ${kindOf(value as object)}; pass ` +
        'the field that identifies it, such as order.id',
    );
  }
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)) {
    throw new InvalidLockPathError(
      text,
      'a lock path value contains a lone UTF-16 surrogate; send well-formed text',
    );
  }
  const encoded = encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase(),
  );
  if (encoded === '.') return '%2E';
  if (encoded === '..') return '%2E%2E';
  return encoded;
}

/** A value's text for a path segment; undefined for what has none (see encodePathSegment). */
function ownText(value: unknown): string | undefined {
  if (typeof value === 'function' || typeof value === 'symbol' || Array.isArray(value)) {
    return undefined;
  }
  if (typeof value !== 'object') return String(value);
  const text = textOf(value);
  return text === undefined || text === '' || /^\[object [^\]]*\]$/.test(text) ? undefined : text;
}

function kindOf(value: object | symbol): string {
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** String(value), or undefined for a value String() throws on ({ toString: 0 }, no prototype). */
function textOf(value: unknown): string | undefined {
  try {
    return String(value);
  } catch {
    return undefined;
  }
}

/** Parent of an absolute path ("/a/b" -> "/a", "/a" -> "/"). */
export function parentPath(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}
