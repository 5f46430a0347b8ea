import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { declarationErrors, emitDeclarations } from './declarations';
import { apiEntries, root } from './entries';
import { internalLeaks, leaksIn } from './internal-leaks';
import { extractReport } from './report';

/**
 * `npm run api:check`'s parts: a change to the public types makes the report differ from the
 * committed one; an `@internal` declaration in the shipped declarations or the report, or the
 * queues' hooks on ZkLockClient, fail.
 */
describe('api:check', () => {
  // Under the repository, so the declarations resolve @nestjs/* and @types/node from its node_modules.
  const work = join(root, 'dist', `api-report-spec-${process.pid}`);
  const declarations = join(work, 'declarations');
  const entry = apiEntries().find((e) => e.entry === './core/testing')!;
  const declarationOf = join(declarations, 'lib', 'core', 'testing', 'in-memory-zookeeper.d.ts');
  let original: string;
  let run = 0;
  const check = () => {
    const tempFolder = join(work, `reports-${++run}`);
    mkdirSync(tempFolder, { recursive: true });
    return extractReport(entry, { declarations, tempFolder, update: false });
  };

  beforeAll(() => {
    emitDeclarations(declarations);
    original = readFileSync(declarationOf, 'utf8');
  });
  afterEach(() => writeFileSync(declarationOf, original));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('finds the declarations as built equal to the committed report, with nothing internal', () => {
    const result = check();
    expect(result.errors).toEqual([]);
    expect(result.changed).toBe(false);
    expect(internalLeaks(declarations)).toEqual([]);
    expect(declarationErrors(declarations, apiEntries().map((e) => e.types))).toEqual([]);
  });

  it('fails on a shipped declaration that names a type stripInternal left out', () => {
    const contender = join(declarations, 'lib', 'core', 'engine', 'contender.d.ts');
    const shipped = readFileSync(contender, 'utf8');
    try {
      writeFileSync(
        contender,
        `${shipped}\nexport declare function leaked(recovery: Recovery): void;\n`,
      );
      expect(declarationErrors(declarations, [entry.types, 'lib/core/index.d.ts'])).toEqual([
        expect.stringMatching(/^lib\/core\/engine\/contender\.d\.ts\(\d+\): Cannot find name 'Recovery'/),
      ]);
    } finally {
      writeFileSync(contender, shipped);
    }
  });

  it('fails on a changed public signature and shows it in the fresh report', () => {
    expect(original).toContain('close(): Promise<void>;');
    writeFileSync(declarationOf, original.replace('close(): Promise<void>;', 'close(force?: boolean): Promise<void>;'));
    const result = check();
    expect(result.changed).toBe(true);
    expect(readFileSync(result.fresh, 'utf8')).toContain('close(force?: boolean): Promise<void>;');
    expect(readFileSync(result.committed, 'utf8')).not.toContain('force?: boolean');
  });

  it("fails on the queues' hooks on the public ZkLockClient, not on its private fields", () => {
    const declared = [
      'export declare class ZkLockClient extends EventEmitter implements QueueHost {',
      '    private readonly nodeData;',
      '    readonly connection: ZkConnection;',
      '    onIdle(queue: { readonly lockPath: string }): void;',
      '    acquire(path: string): Promise<LockHandle>;',
      '}',
    ].join('\n');
    expect(leaksIn('lock-client.d.ts', declared)).toEqual([
      'lock-client.d.ts: ZkLockClient implements QueueHost',
      'lock-client.d.ts: ZkLockClient.connection is public',
      'lock-client.d.ts: ZkLockClient.onIdle is public',
    ]);
  });

  it('fails on an @internal declaration left in the shipped declarations and the report', () => {
    const leaked = original.replace(
      'close(): Promise<void>;',
      'close(): Promise<void>;\n    /** @internal */\n    hook(): void;',
    );
    writeFileSync(declarationOf, leaked);
    expect(internalLeaks(declarations)).toEqual([
      'lib/core/testing/in-memory-zookeeper.d.ts: an @internal declaration is still there',
    ]);
    const result = check();
    expect(result.changed).toBe(true);
    expect(leaksIn('report', readFileSync(result.fresh, 'utf8'))).toEqual([
      'report: an @internal declaration is still there',
    ]);
  });
});
