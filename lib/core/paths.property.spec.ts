import fc from 'fast-check';
import { InvalidLockPathError } from './errors';
import { applyNamespace, encodePathSegment, validateLockPath } from './paths';

/**
 * Property-based checks of path validation and segment encoding: for any input
 * they never crash with anything but InvalidLockPathError, accept exactly what ZooKeeper accepts,
 * and keep an untrusted value inside one segment.
 */

/** Any UTF-16 code unit, lone surrogates included (what a JSON body can carry). */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));
const anyText = fc.string({ unit: anyUnit, maxLength: 24 });
/** Segments, including the ones that matter: empty, ".", "..", encoded dots, any text. */
const segment = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9:%._-]{1,6}$/) },
  { weight: 2, arbitrary: fc.constantFrom('', '.', '..', '...', '.a', '%2E', '%2E%2E') },
  { weight: 1, arbitrary: anyText },
);
/** Path-like text: mostly a leading "/", segments, sometimes a trailing "/". */
const pathish = fc
  .tuple(
    fc.oneof({ weight: 9, arbitrary: fc.constant('/') }, { weight: 1, arbitrary: fc.constant('') }),
    fc.array(segment, { maxLength: 5 }),
    fc.oneof({ weight: 9, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constant('/') }),
  )
  .map(([lead, segments, trail]) => lead + segments.join('/') + trail);
/** Untrusted values: anything a request can carry, with the tricky ones often. */
const untrusted = fc.oneof(
  segment,
  anyText,
  fc.constantFrom('../admin', 'a/b', '/', '%', '%2F', '\u0000', '\uD800x', '\uDC00'),
);

/** ZooKeeper's PathUtils.validatePath rules, written out independently of paths.ts. */
function zooKeeperAccepts(path: string): boolean {
  if (path.length < 2 || path[0] !== '/' || path.endsWith('/')) return false;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    const forbidden =
      c <= 0x1f ||
      (c >= 0x7f && c <= 0x9f) ||
      (c >= 0xd800 && c <= 0xf8ff) ||
      (c >= 0xfff0 && c <= 0xffff);
    if (forbidden) return false;
  }
  return path
    .slice(1)
    .split('/')
    .every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** Runs `fn`; a thrown error must be an InvalidLockPathError naming `path`. */
function outcome<T>(fn: () => T, path: string): { value: T } | { error: InvalidLockPathError } {
  try {
    return { value: fn() };
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidLockPathError);
    expect((err as InvalidLockPathError).message).toContain(`Invalid lock path "${path}"`);
    return { error: err as InvalidLockPathError };
  }
}

describe('validateLockPath (properties)', () => {
  it('accepts exactly the paths ZooKeeper accepts (minus the root), and fails clearly otherwise', () => {
    fc.assert(
      fc.property(fc.oneof(pathish, anyText), (path) => {
        const result = outcome(() => validateLockPath(path), path);
        expect('value' in result).toBe(path !== '/' && zooKeeperAccepts(path));
        if ('value' in result) expect(result.value).toBe(path);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never crashes on values that are not strings', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.constant({ toString: 0 })), (value) => {
        fc.pre(typeof value !== 'string');
        expect(() => validateLockPath(value)).toThrow(InvalidLockPathError);
      }),
    );
    expect(() => validateLockPath(Object.create(null))).toThrow(/must be a string/);
  });
});

describe('encodePathSegment (properties)', () => {
  it('keeps any value inside one segment, reversibly (distinct values never share a lock)', () => {
    fc.assert(
      fc.property(untrusted, untrusted, (value, other) => {
        const result = outcome(() => encodePathSegment(value), value);
        const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
        expect('error' in result).toBe(lone.test(value) || value === '');
        if (!('value' in result)) return;
        const segment = result.value;
        expect(segment.includes('/')).toBe(false);
        expect(segment).not.toBe('');
        expect(zooKeeperAccepts(`/locks/${segment}`)).toBe(true);
        expect(zooKeeperAccepts(`/locks/${segment}/more`)).toBe(true);
        expect(decodeURIComponent(segment)).toBe(value);
        if (other !== value && other !== '' && !lone.test(other))
          expect(encodePathSegment(other)).not.toBe(segment);
      }),
      { numRuns: 2_000 },
    );
  });

  it('never crashes on any value (objects, symbols, values String() throws on)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.constant({ toString: 0 })), (value) => {
        try {
          encodePathSegment(value);
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidLockPathError);
        }
      }),
    );
    expect(() => encodePathSegment(Object.create(null))).toThrow(/got an object/);
  });

  it('turns numbers, booleans and bigints into their text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.boolean(), fc.bigInt()), (value) => {
        expect(decodeURIComponent(encodePathSegment(value))).toBe(String(value));
      }),
    );
  });
});

describe('applyNamespace (properties)', () => {
  it('keeps every valid lock path below its namespace', () => {
    const valid = pathish.filter(zooKeeperAccepts);
    fc.assert(
      fc.property(valid, pathish, (namespace, path) => {
        const result = outcome(() => applyNamespace(namespace, path), path);
        // Not `return expect(...)`: Vitest's matchers return a value fast-check reads as a verdict.
        if ('error' in result) {
          expect(zooKeeperAccepts(path)).toBe(false);
          return;
        }
        expect(result.value.startsWith(namespace + '/')).toBe(true);
        expect(zooKeeperAccepts(result.value)).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });
});
