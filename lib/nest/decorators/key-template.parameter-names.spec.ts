import { parameterNames } from './key-template.parameter-names';

describe('parameterNames', () => {
  it('reads plain, default, rest and destructured parameters', () => {
    class Service {
      async run(orderId: string, { qty }: { qty: number }, note = 'a,(b)', ...rest: unknown[]) {
        return [orderId, qty, note, rest];
      }
    }
    expect(parameterNames(Service.prototype.run)).toEqual(['orderId', undefined, 'note', 'rest']);
  });

  it('reads functions, arrows and no parameters', () => {
    expect(
      parameterNames(function named(a: number, /* b, */ c: number) {
        return a + c;
      }),
    ).toEqual(['a', 'c']);
    expect(parameterNames((x: number) => x)).toEqual(['x']);
    expect(parameterNames(() => 1)).toEqual([]);
  });
});
