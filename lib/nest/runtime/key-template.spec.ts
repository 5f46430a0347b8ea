import { InvalidLockPathError } from '../../core/errors';
import { parseKeyTemplate, TemplateRef } from '../decorators/key-template';
import {
  dig,
  MAX_EXPANDED_PATHS,
  resolveKeyTemplate,
  resolveKeyTemplatePaths,
} from './key-template.resolver';

const where = 'OrdersController.update';
const fromRecord =
  (values: Record<string, unknown>) =>
  (ref: TemplateRef): unknown =>
    dig(values, ref.segments);

describe('parseKeyTemplate', () => {
  it('splits literals and dotted placeholders', () => {
    const t = parseKeyTemplate('/locks/order:<id>/<body.items.0.sku>', where);
    expect(t.parts).toEqual([
      '/locks/order:',
      { raw: 'id', segments: ['id'] },
      '/',
      { raw: 'body.items.0.sku', segments: ['body', 'items', '0', 'sku'] },
    ]);
    expect(t.refs.map((r) => r.raw)).toEqual(['id', 'body.items.0.sku']);
  });

  it.each([
    ['/locks/<id', '"<" at index 7 is never closed'],
    ['/locks/id>', '">" at index 9 has no "<"'],
    ['/locks/<a<b>', 'never closed before the next "<"'],
    ['/locks/<>', 'empty placeholder'],
    ['/locks/<a..b>', 'invalid name part ""'],
    ['/locks/<a b>', 'invalid name part "a b"'],
    ['locks/<id>', 'must start with "/"'],
    ['/locks//<id>', 'empty segment'],
    ['/locks/<id>/', 'must not end with "/"'],
  ])('rejects %s at decoration time', (source, reason) => {
    expect(() => parseKeyTemplate(source, where)).toThrow(InvalidLockPathError);
    expect(() => parseKeyTemplate(source, where)).toThrow(reason);
    expect(() => parseKeyTemplate(source, where)).toThrow(where);
  });
});

describe('resolveKeyTemplate', () => {
  const template = parseKeyTemplate('/locks/order:<id>', where);

  it('puts a plain value in place', () => {
    expect(resolveKeyTemplate(template, fromRecord({ id: 42 }), where)).toBe('/locks/order:42');
  });

  it.each([
    ['../admin', '/locks/order:..%2Fadmin'],
    ['a/b', '/locks/order:a%2Fb'],
    ['..', '/locks/order:%2E%2E'],
    ['\u0000x', '/locks/order:%00x'],
  ])('keeps %j inside one segment', (value, expected) => {
    const path = resolveKeyTemplate(template, fromRecord({ id: value }), where);
    expect(path).toBe(expected);
    expect(path.split('/')).toHaveLength(3);
  });

  it('encodes a whole-segment ".." so it is no relative segment', () => {
    const whole = parseKeyTemplate('/locks/<id>', where);
    expect(resolveKeyTemplate(whole, fromRecord({ id: '..' }), where)).toBe('/locks/%2E%2E');
  });

  it.each([undefined, null, ''])('treats %j as missing', (value) => {
    const run = () => resolveKeyTemplate(template, fromRecord({ id: value }), where);
    expect(run).toThrow(InvalidLockPathError);
    expect(run).toThrow('the value of <id> is missing');
  });

  it('refuses an object value', () => {
    const run = () => resolveKeyTemplate(template, fromRecord({ id: { a: 1 } }), where);
    expect(run).toThrow('is not a string or number');
  });
});

describe('dig', () => {
  it('walks own properties and array indexes only', () => {
    expect(dig({ items: [{ sku: 'x' }] }, ['items', '0', 'sku'])).toBe('x');
    expect(dig({}, ['constructor'])).toBeUndefined();
    expect(dig({ a: 1 }, ['a', 'b'])).toBeUndefined();
  });
});

describe('templates with <list.*.field> (several paths)', () => {
  it.each([
    ['/locks/<*.id>', 'must name the array before "*"'],
    ['/locks/<a.*.b.*>', 'more than one "*"'],
    ['/locks/<a.*>/<b.*>', 'only one placeholder may contain "*"'],
  ])('rejects %s at decoration time', (source, reason) => {
    expect(() => parseKeyTemplate(source, where)).toThrow(InvalidLockPathError);
    expect(() => parseKeyTemplate(source, where)).toThrow(reason);
  });

  it('gives one encoded path per element, other placeholders shared', () => {
    const template = parseKeyTemplate('/shop/<shop>/stock:<items.*.sku>', where);
    const values = { shop: 's1', items: [{ sku: 'a' }, { sku: '../b' }] };
    expect(resolveKeyTemplatePaths(template, fromRecord(values), where)).toEqual([
      '/shop/s1/stock:a',
      '/shop/s1/stock:..%2Fb', // the value stays inside its segment
    ]);
    const plain = parseKeyTemplate('/ids/<ids.*>', where);
    expect(resolveKeyTemplatePaths(plain, fromRecord({ ids: [1, 'x'] }), where)).toEqual([
      '/ids/1',
      '/ids/x',
    ]);
  });

  it(`refuses more than ${MAX_EXPANDED_PATHS} elements, naming the limit`, () => {
    const template = parseKeyTemplate('/ids/<ids.*>', where);
    const ids = Array.from({ length: MAX_EXPANDED_PATHS + 1 }, (_, i) => i);
    expect(() => resolveKeyTemplatePaths(template, fromRecord({ ids }), where)).toThrow(
      `ids has ${MAX_EXPANDED_PATHS + 1} elements, more than ${MAX_EXPANDED_PATHS} locks at once`,
    );
  });

  it('a template without "*" still gives one path', () => {
    const template = parseKeyTemplate('/locks/<id>', where);
    expect(resolveKeyTemplatePaths(template, fromRecord({ id: 7 }), where)).toBe('/locks/7');
  });
});
