import { InvalidLockPathError } from './errors';
import { applyNamespace, encodePathSegment, parentPath, validateLockPath } from './paths';

describe('validateLockPath', () => {
  it.each([
    '/a',
    '/locks/order:42',
    '/a/b/c',
    '/with space',
    '/a.b',
    '/...',
    '/ünïcödé',
    '/日本',
    '/x-\uFFEF',
  ])('accepts %j', (path) => {
    expect(validateLockPath(path)).toBe(path);
  });

  it.each([
    ['relative', 'locks/a', 'must start with "/"'],
    ['empty', '', 'must start with "/"'],
    ['root', '/', 'root "/" cannot be a lock'],
    ['trailing slash', '/a/', 'must not end with "/"'],
    ['empty segment', '/a//b', 'empty segment'],
    ['dot segment', '/a/./b', 'relative segment "."'],
    ['dot-dot segment', '/a/..', 'relative segment ".."'],
    ['NUL', '/a\u0000', 'U+0000 at index 2'],
    ['control', '/a\u001fb', 'U+001f'],
    ['DEL', '/\u007f', 'U+007f'],
    ['C1 control', '/\u009f', 'U+009f'],
    ['surrogate (emoji)', '/lock-\u{1F512}', 'U+d83d at index 6'],
    ['private use', '/\uE000', 'U+e000'],
    ['specials', '/\uFFFF', 'U+ffff'],
  ])('rejects %s', (_name, path, reason) => {
    let error: unknown;
    try {
      validateLockPath(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidLockPathError);
    expect((error as InvalidLockPathError).path).toBe(path);
    expect((error as Error).message).toContain(reason);
    expect((error as Error).message).toContain(`Invalid lock path "${path}"`);
  });

  it.each([undefined, null, 42, {}])('rejects the non-string %p', (value) => {
    expect(() => validateLockPath(value)).toThrow('a lock path must be a string');
  });
});

describe('applyNamespace', () => {
  it('returns the path unchanged without a namespace', () => {
    expect(applyNamespace(undefined, '/a')).toBe('/a');
    expect(applyNamespace('', '/a')).toBe('/a');
  });

  it('prefixes the namespace', () => {
    expect(applyNamespace('/my-app', '/orders/42')).toBe('/my-app/orders/42');
  });

  it('validates both the namespace and the path', () => {
    expect(() => applyNamespace('my-app', '/a')).toThrow(InvalidLockPathError);
    expect(() => applyNamespace('/my-app/', '/a')).toThrow(InvalidLockPathError);
    expect(() => applyNamespace('/my-app', 'a')).toThrow(InvalidLockPathError);
  });
});

describe('encodePathSegment', () => {
  it('keeps safe values as they are', () => {
    expect(encodePathSegment('42')).toBe('42');
    expect(encodePathSegment(42)).toBe('42');
    expect(encodePathSegment('order-7_A.b~c')).toBe('order-7_A.b~c');
  });

  it('keeps a value inside one segment', () => {
    expect(encodePathSegment('a/b')).toBe('a%2Fb');
    expect(encodePathSegment('.')).toBe('%2E');
    expect(encodePathSegment('..')).toBe('%2E%2E');
    expect(encodePathSegment("!'()*")).toBe('%21%27%28%29%2A');
  });

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    ['', 'an empty string'],
  ])(
    'refuses a missing value (%p): requests without it must not share one lock',
    (value, shown) => {
      expect(() => encodePathSegment(value)).toThrow(InvalidLockPathError);
      expect(() => encodePathSegment(value)).toThrow(
        `a lock path value is missing (${shown}); send a non-empty string or a number for it`,
      );
    },
  );

  it.each([
    [{ id: 7 }, 'an object'],
    [[7], 'an array'],
    [() => 7, 'a function'],
    [Symbol('id'), 'a symbol'],
    [Object.create(null), 'an object'],
  ])('refuses a value that is not a scalar (%p)', (value, kind) => {
    expect(() => encodePathSegment(value)).toThrow(InvalidLockPathError);
    expect(() => encodePathSegment(value)).toThrow(
      `a lock path value must be a string or a number (a boolean, a bigint or an object with a text of its own, such as an ObjectId, also works), got ${kind}; pass the field that identifies it, such as order.id`,
    );
  });

  it('turns an object with a text of its own (an ObjectId, a Date, a URL) into that text', () => {
    const objectId = { toString: () => '507f1f77bcf86cd799439011' };
    expect(encodePathSegment(objectId)).toBe('507f1f77bcf86cd799439011');
    expect(encodePathSegment(new URL('https://shop.example/a b'))).toBe(
      'https%3A%2F%2Fshop.example%2Fa%2520b',
    );
    expect(encodePathSegment(new Date(0))).toBe(encodePathSegment(String(new Date(0))));
    // Its text is encoded like any other: it cannot leave its segment.
    expect(encodePathSegment({ toString: () => '../admin' })).toBe('..%2Fadmin');
  });

  it('turns booleans and bigints into their text, as the template form does', () => {
    expect(encodePathSegment(false)).toBe('false');
    expect(encodePathSegment(2n ** 70n)).toBe('1180591620717411303424');
    expect(encodePathSegment(0)).toBe('0');
  });

  it.each(['../../etc', '/', 'a/../b', '\u0000', '\u{1F512}', '\uE000', '\uFFFF', 'x y%z', '日本'])(
    'turns %j into one valid segment',
    (value) => {
      const segment = encodePathSegment(value);
      expect(segment).not.toContain('/');
      expect(validateLockPath(`/orders/${segment}`)).toBe(`/orders/${segment}`);
      expect(decodeURIComponent(segment)).toBe(value);
    },
  );

  it('never fails with a non-library error on a lone surrogate (possible in JSON input)', () => {
    let outcome: unknown;
    try {
      outcome = encodePathSegment('\uD800');
    } catch (err) {
      outcome = err;
    }
    if (typeof outcome === 'string')
      expect(validateLockPath(`/x/${outcome}`)).toBe(`/x/${outcome}`);
    else expect(outcome).toBeInstanceOf(InvalidLockPathError);
  });
});

describe('parentPath', () => {
  it.each([
    ['/a/b', '/a'],
    ['/a/b/c', '/a/b'],
    ['/a', '/'],
  ])('%s -> %s', (path, parent) => {
    expect(parentPath(path)).toBe(parent);
  });
});
