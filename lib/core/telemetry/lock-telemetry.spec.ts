import { InvalidLockOptionsError } from '../errors';
import { OTHER_PATHS_LABEL, PathLabels } from './lock-telemetry';

describe('PathLabels', () => {
  const labels = new PathLabels(['/locks/order:<id>', '/locks/<name>', '/orders/<0.id>/line-<1>']);

  it('labels a concrete path with the template it was made from', () => {
    expect(labels.labelOf('/locks/order:42')).toBe('/locks/order:<id>');
    expect(labels.labelOf('/orders/7/line-3')).toBe('/orders/<0.id>/line-<1>');
  });

  it('prefers the most literal template, whatever the order they were given in', () => {
    expect(labels.labelOf('/locks/payments')).toBe('/locks/<name>');
    expect(new PathLabels(['/locks/<name>', '/locks/order:<id>']).labelOf('/locks/order:1')).toBe(
      '/locks/order:<id>',
    );
  });

  it('a placeholder stands for one segment: deeper or other paths are "other"', () => {
    expect(labels.labelOf('/locks/order:42/extra')).toBe(OTHER_PATHS_LABEL);
    expect(labels.labelOf('/elsewhere/42')).toBe(OTHER_PATHS_LABEL);
    expect(labels.labelOf('/locks/order:')).toBe('/locks/<name>');
  });

  it('treats regular expression characters in templates literally', () => {
    const dotted = new PathLabels(['/a.b/<x>']);
    expect(dotted.labelOf('/a.b/1')).toBe('/a.b/<x>');
    expect(dotted.labelOf('/aXb/1')).toBe(OTHER_PATHS_LABEL);
  });

  it('keeps at most a bounded number of paths cached, and labels them the same after', () => {
    const many = new PathLabels(['/jobs/<id>']);
    const labelled = Array.from({ length: 25_000 }, (_, i) => many.labelOf(`/jobs/${i}`));
    expect(new Set(labelled)).toEqual(new Set(['/jobs/<id>']));
    expect((many as unknown as { cache: Map<string, string> }).cache.size).toBeLessThanOrEqual(
      10_000,
    );
  });

  it.each([['locks/<id>'], ['/locks/<id'], ['/locks/id>'], ['/locks/'], [42], ['/a//<b>']])(
    'refuses %p with InvalidLockOptionsError naming it',
    (template) => {
      expect(() => new PathLabels([template as string])).toThrow(InvalidLockOptionsError);
      expect(() => new PathLabels([template as string])).toThrow(JSON.stringify(template));
    },
  );
});
