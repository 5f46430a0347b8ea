import { layerProblems, libGraph } from './check-layers';

describe('check-layers', () => {
  it('finds lib/ layered, with no cycle', () => {
    expect(layerProblems(libGraph())).toEqual([]);
  });

  it('refuses an import from a layer above, the NestJS layer reaching into the engine, and cycles', () => {
    const graph = new Map<string, string[]>([
      ['core/engine/held-lock', ['core/client/owner-scope']],
      ['core/client/owner-scope', []],
      ['nest/runtime/hold', ['core/engine/contender', 'core/client/lock-client']],
      ['core/engine/contender', ['core/engine/waiter-queue']],
      ['core/engine/waiter-queue', ['core/engine/contender']],
      ['core/client/lock-client', []],
    ]);
    expect(layerProblems(graph)).toEqual([
      'lib/core/engine/held-lock.ts imports lib/core/client/owner-scope.ts: core/engine may not import core/client',
      'lib/nest/runtime/hold.ts imports lib/core/engine/contender.ts: nest may not import core/engine',
      'import cycle: lib/core/engine/contender.ts -> lib/core/engine/waiter-queue.ts -> lib/core/engine/contender.ts',
    ]);
  });
});
