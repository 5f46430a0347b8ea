import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractSnippets } from './extract';
import { headingSlugs } from './links';
import { projectTypeScript, type TypeScriptLine } from '../package/typescripts';
import { typeCheckSnippets } from './type-check';

/** `npm run docs:check`'s parts: what it compiles, where it says a problem is, which anchors exist. */
describe('docs:check', () => {
  let dir: string;
  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'doc-snippets-'))));
  // This project's TypeScript: what `npm run docs:check` compiles with.
  const check = (file: string, typescripts = [projectTypeScript()]): Promise<string[]> =>
    typeCheckSnippets(extractSnippets(file).snippets, typescripts);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles a complete block as it is and a fragment inside its prelude', async () => {
    const file = write(
      'a.md',
      [
        '```ts',
        "import { ZkLockClient } from 'nestjs-zookeeper-lock/core';",
        '```',
        '<!-- snippet: prelude=core-client -->',
        '```ts',
        "await locks.withLock('/a', () => 1);",
        '```',
        '```bash',
        'npm test',
        '```',
      ].join('\n'),
    );
    const { snippets, problems } = extractSnippets(file);
    expect(problems).toEqual([]);
    expect(snippets.map((s) => [s.line, s.prelude])).toEqual([
      [2, undefined],
      [6, 'core-client'],
    ]);
    expect(snippets[1].text).toContain('declare const locks: ZkLockClient;');
    expect(await typeCheckSnippets(snippets, [projectTypeScript()])).toEqual([]);
  });

  it('reports a type error at its line of the Markdown file, in an indented block too', async () => {
    const file = write(
      'b.md',
      [
        '- a list item:',
        '  ```ts',
        "  import { ZkLockClient } from 'nestjs-zookeeper-lock/core';",
        '',
        "  const locks: string = ZkLockClient.connect({ connectionString: 'zk:2181' });",
        '  ```',
      ].join('\n'),
    );
    const [problem, ...more] = await check(file);
    expect(more).toEqual([]);
    expect(problem).toMatch(/b\.md:5:9: TS2322: Type 'Promise<ZkLockClient>' is not assignable/);
  });

  it("reports what only a Nest CLI starter's tsconfig refuses, naming the starter", async () => {
    const file = write(
      'd.md',
      [
        '```ts',
        "import { Injectable } from '@nestjs/common';",
        "import { Leadership, OnLeadershipGranted } from 'nestjs-zookeeper-lock';",
        '',
        '@Injectable()',
        'export class Relay {',
        "  @OnLeadershipGranted('/elections/outbox')",
        '  started(leadership: Leadership): void {}',
        '}',
        '```',
      ].join('\n'),
    );
    const problems = await check(file);
    expect(problems).toEqual([
      expect.stringMatching(/d\.md:8:23: TS1272: .*\[the NestJS 12 starter \(ESM\)\]$/),
      expect.stringMatching(/d\.md:8:23: TS1272: .*\[the NestJS 11 starter \(CommonJS\)\]$/),
    ]);
  });

  it('names the TypeScript lines that refuse a block when not all do, and shows a tsc that cannot run', async () => {
    // A second line whose `tsc` (no compiler API beside it, so it runs as a process, as
    // TypeScript 7's does) finds nothing in a clean folder, a problem of its own in the
    // starters' first snippet, and cannot run at all in this project's folder.
    const line = join(dir, 'other-tsc');
    mkdirSync(join(line, 'bin'), { recursive: true });
    const tsc = join(line, 'bin', 'tsc');
    writeFileSync(
      tsc,
      `const { readdirSync } = require('node:fs');
const dir = process.argv[process.argv.indexOf('-p') + 1];
const [first] = readdirSync(dir).filter((f) => /_L\\d+_\\d+\\.[cm]ts$/.test(f)).sort();
if (dir.endsWith('0')) { console.error('panic: unsupported'); process.exit(3); }
if (first) { console.log(first + '(2,9): error TS9999: only here.\\n  Because.'); process.exit(2); }`,
    );
    const other: TypeScriptLine = { name: 'TypeScript 0.0.0', dir: line, tsc };
    const file = write(
      'e.md',
      [
        '```ts',
        // TypeScript 6 and 7 infer T from `produce` whatever the order; 5.9 not through methods.
        'declare function callIt<T>(o: { produce: (x: number) => T; consume: (y: T) => void }): void;',
        'callIt({',
        '  consume(y) {',
        '    y.toFixed();',
        '  },',
        '  produce(x: number) {',
        '    return x * 2;',
        '  },',
        '});',
        '```',
      ].join('\n'),
    );
    const problems = await check(file, [projectTypeScript(), other]);
    const project = projectTypeScript().name.replace(/\./g, '\\.');
    expect(problems).toEqual([
      expect.stringMatching(
        new RegExp(`e\\.md:5:5: TS18046: 'y' is of type 'unknown'\\. \\[${project}\\]$`),
      ),
      'tsc exited with 3:\n    panic: unsupported [TypeScript 0.0.0]',
      expect.stringMatching(
        /e\.md:3:9: TS9999: only here\.\n {2}Because\. \[the NestJS 12 starter \(ESM\), TypeScript 0\.0\.0\]$/,
      ),
    ]);
  });

  it('refuses an unknown prelude or directive', () => {
    const file = write(
      'c.md',
      [
        '<!-- snippet: prelude=nope -->',
        '```ts',
        '```',
        '<!-- snippet: skip -->',
        '```ts',
        '```',
      ].join('\n'),
    );
    const { snippets, problems } = extractSnippets(file);
    expect(snippets).toHaveLength(1); // the one with a bad directive is still compiled as a whole
    expect(problems).toEqual([
      expect.stringMatching(/c\.md:3: no prelude "nope"/),
      expect.stringMatching(/c\.md:6: unknown snippet directive "skip"/),
    ]);
  });

  it("names headings as GitHub's anchors do", () => {
    const slugs = headingSlugs(
      [
        '# `@DistributedLock(path, options)`',
        '## 9. Busy locks (`onBusy`)',
        '## Usage',
        '## Usage',
        '```bash',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...slugs]).toEqual([
      'distributedlockpath-options',
      '9-busy-locks-onbusy',
      'usage',
      'usage-1',
    ]);
  });
});
