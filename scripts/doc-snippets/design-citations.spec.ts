import { citationProblems, designSectionNames } from './design-citations';
import { headingSlugs } from './links';

/**
 * The design.md citation check of `npm run docs:check`. The citations are assembled here, so
 * this file's own text cites nothing (the check reads it too).
 */
describe('design.md citations', () => {
  const cited = 'docs/design' + '.md';
  const sign = '\u00a7';
  const markdown = [
    '# Design notes',
    `## What "holding" means, and when it ends`,
    '## The lock family (read/write lock, semaphore, multi-path lock)',
    '1. **Lost create reply.** A `create` whose reply is lost ...',
    '- **Consumer apps** (issue #20 §2).',
    `Tokens (see "Fencing tokens"), as issue #19 ${sign}3 ${sign}6 said.`,
  ].join('\n');
  const design = { names: designSectionNames(markdown), slugs: headingSlugs(markdown) };
  const check = (text: string, file = 'lib/x.ts') => citationProblems(file, text, design);

  it('knows a section by its heading, its short forms and a bold lead-in', () => {
    expect([...design.names]).toEqual(
      expect.arrayContaining([
        'What holding means, and when it ends',
        'What holding means',
        'The lock family (read/write lock, semaphore, multi-path lock)',
        'The lock family',
        'Lost create reply',
        'Consumer apps',
      ]),
    );
  });

  it('accepts a name, on one line or wrapped in a comment, and a heading anchor', () => {
    expect(
      check(
        [
          `/** Leases (${cited} "The lock family"), see ${cited}, "What holding`,
          ' * means". Also ' + `${cited}#what-holding-means-and-when-it-ends. */`,
        ].join('\n'),
      ),
    ).toEqual([]);
  });

  it('fails on a number, a name design.md does not have and a broken anchor, with the line', () => {
    expect(
      check(
        [
          `// one (${cited} ${sign}3)`,
          `// two (${cited} "Reentrancy")`,
          `// three ${cited}`,
          `//   ${sign}1.5 wrapped`,
          `// four ${cited}#3-ownership`,
        ].join('\n'),
      ),
    ).toEqual([
      `lib/x.ts:1: cites ${cited} by number; cite the section by name`,
      `lib/x.ts:3: cites ${cited} by number; cite the section by name`,
      `lib/x.ts:2: ${cited} has no section "Reentrancy"`,
      `lib/x.ts:5: ${cited} has no heading #3-ownership`,
    ]);
  });

  it("fails on design.md's own section numbers, not on an issue's items", () => {
    expect(citationProblems(cited, markdown, design)).toEqual([]);
    expect(citationProblems(cited, `${markdown}\nthe formula of ${sign}4.`, design)).toEqual([
      `${cited}:7: a section number; name the section ("The mutex recipe")`,
    ]);
  });
});
