import 'reflect-metadata';
import fc from 'fast-check';
import { InvalidLockPathError, ZkLockError } from '../../core/errors';
import { encodePathSegment, validateLockPath } from '../../core/paths';
import { DistributedLock } from '../../index';
import { parseKeyTemplate, TemplateRef } from '../decorators/key-template';
import { resolveKeyTemplate } from './key-template.resolver';

/**
 * Property-based checks of lock path templates: any template either parses or
 * fails with an InvalidLockPathError naming the method; any placeholder values either give a
 * valid path in which each value fills exactly its own segment, or a clear InvalidLockPathError.
 */
const where = 'OrdersService.place';

/** Any UTF-16 code unit, lone surrogates included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));
const anyText = fc.string({ unit: anyUnit, maxLength: 12 });
const refName = fc
  .array(fc.oneof(fc.stringMatching(/^[A-Za-z_$][\w$-]{0,4}$/), fc.nat(20).map(String)), {
    minLength: 1,
    maxLength: 3,
  })
  .map((names) => names.join('.'));
const literal = fc.oneof(
  fc.stringMatching(/^[a-z0-9:/._-]{0,6}$/),
  fc.constantFrom('/', '//', '/./', '/../', ':', '.'),
);
/** Templates that usually parse: "/" + literals and placeholders. */
const wellFormed = fc
  .array(
    fc.oneof(
      literal,
      refName.map((name) => `<${name}>`),
    ),
    { maxLength: 6 },
  )
  .map((parts) => '/' + parts.join(''));
/** Anything, weighted towards the characters a template parser cares about. */
const anyTemplate = fc.oneof(
  wellFormed,
  fc.string({
    unit: fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom('<', '>', '/', '.', 'a', '1', '_', '$', '-', ' ') },
      { weight: 1, arbitrary: anyUnit },
    ),
    maxLength: 20,
  }),
  anyText,
);
/** What a request or a caller can put in a placeholder. */
const value = fc.oneof(
  { weight: 4, arbitrary: anyText },
  { weight: 2, arbitrary: fc.constantFrom('../admin', 'a/b', '..', '.', '%2F', '\uD800', '') },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.bigInt()) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null) },
  { weight: 1, arbitrary: fc.oneof(fc.object(), fc.array(fc.nat()), fc.func(fc.nat())) },
);

function parsesOrNamesTheMethod(source: string): ReturnType<typeof parseKeyTemplate> | undefined {
  try {
    return parseKeyTemplate(source, where);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidLockPathError);
    expect((err as Error).message).toContain(`(template of ${where})`);
    return undefined;
  }
}

const hasLoneSurrogate = (text: string): boolean =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

describe('parseKeyTemplate (properties)', () => {
  it('parses any template or fails with an InvalidLockPathError naming the method', () => {
    fc.assert(
      fc.property(anyTemplate, (source) => void parsesOrNamesTheMethod(source)),
      {
        numRuns: 3_000,
      },
    );
  });

  it('the same through @DistributedLock: a bad template fails when the class is defined, naming Class.method', () => {
    fc.assert(
      fc.property(anyTemplate, (source) => {
        class OrdersService {
          place(): void {}
        }
        const descriptor = Object.getOwnPropertyDescriptor(OrdersService.prototype, 'place')!;
        try {
          DistributedLock(source)(OrdersService.prototype, 'place', descriptor);
        } catch (err) {
          expect(err).toBeInstanceOf(ZkLockError);
          expect((err as Error).message).toContain(where);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('resolveKeyTemplate (properties)', () => {
  it('each value fills exactly its own segment, or the call fails with a clear error', () => {
    const parsed = wellFormed
      .map((source) => {
        try {
          return parseKeyTemplate(source, where);
        } catch {
          return undefined;
        }
      })
      .filter((t) => t !== undefined && t.refs.length > 0);
    fc.assert(
      fc.property(parsed, fc.array(value, { minLength: 1, maxLength: 6 }), (template, values) => {
        // The same placeholder name gives the same value wherever it appears.
        const names = [...new Set(template!.refs.map((r) => r.raw))];
        const valueOf = (ref: TemplateRef): unknown =>
          values[names.indexOf(ref.raw) % values.length];
        const expectedProblem = template!.refs.some((ref) => {
          const v = valueOf(ref);
          if (v === undefined || v === null || v === '') return true;
          if (typeof v === 'object' || typeof v === 'function') return true;
          return hasLoneSurrogate(String(v));
        });
        let path: string;
        try {
          path = resolveKeyTemplate(template!, valueOf, 'the request');
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidLockPathError);
          expect((err as InvalidLockPathError).message).toContain(template!.source);
          expect(expectedProblem).toBe(true);
          return;
        }
        expect(expectedProblem).toBe(false);
        expect(validateLockPath(path)).toBe(path);
        // Same shape as the template with a plain "x" per placeholder: no value added a "/".
        const sample = template!.parts.map((p) => (typeof p === 'string' ? p : 'x')).join('');
        expect(path.split('/').length).toBe(sample.split('/').length);
        // And each value sits where its placeholder was, encoded reversibly.
        let rest = path;
        for (const part of template!.parts) {
          if (typeof part === 'string') {
            expect(rest.startsWith(part)).toBe(true);
            rest = rest.slice(part.length);
          } else {
            const encoded = encodePathSegment(valueOf(part));
            expect(rest.startsWith(encoded)).toBe(true);
            expect(decodeURIComponent(encoded)).toBe(String(valueOf(part)));
            rest = rest.slice(encoded.length);
          }
        }
        expect(rest).toBe('');
      }),
      { numRuns: 2_000 },
    );
  });
});
