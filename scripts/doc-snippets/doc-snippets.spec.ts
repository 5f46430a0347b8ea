import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractSnippets } from './extract';
import { headingSlugs } from './links';
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
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles a complete block as it is and a fragment inside its prelude', () => {
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
    expect(typeCheckSnippets(snippets)).toEqual([]);
  });

  it('reports a type error at its line of the Markdown file, in an indented block too', () => {
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
    const [problem, ...more] = typeCheckSnippets(extractSnippets(file).snippets);
    expect(more).toEqual([]);
    expect(problem).toMatch(/b\.md:5:9: TS2322: Type 'Promise<ZkLockClient>' is not assignable/);
  });

  it("reports what only a Nest CLI starter's tsconfig refuses, naming the starter", () => {
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
    const problems = typeCheckSnippets(extractSnippets(file).snippets);
    expect(problems).toEqual([
      expect.stringMatching(/d\.md:8:23: TS1272: .*\[the NestJS 12 starter \(ESM\)\]$/),
      expect.stringMatching(/d\.md:8:23: TS1272: .*\[the NestJS 11 starter \(CommonJS\)\]$/),
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
