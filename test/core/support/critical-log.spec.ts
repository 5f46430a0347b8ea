import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCriticalSections } from './critical-log';

/** The overlap detector the mutual-exclusion and fencing tests rely on must itself catch overlaps. */
describe('readCriticalSections', () => {
  const dir = mkdtempSync(join(tmpdir(), 'critical-log-'));
  const file = join(dir, 'sections.log');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const parse = (lines: string[]) => {
    writeFileSync(file, lines.map((l) => l + '\n').join(''));
    return () => readCriticalSections(file);
  };

  it('parses sections that follow each other', () => {
    const sections = parse([
      'enter 1:0:0 10 100',
      'exit 1:0:0 10 105',
      'enter 2:0:0 11 105',
      'exit 2:0:0 11 107',
    ])();
    expect(sections).toEqual([
      { who: '1:0:0', token: 10n, enteredAt: 100, exitedAt: 105 },
      { who: '2:0:0', token: 11n, enteredAt: 105, exitedAt: 107 },
    ]);
  });

  it('throws when a caller enters while another is inside', () => {
    const read = parse([
      'enter 1:0:0 10 100',
      'enter 2:0:0 11 101',
      'exit 1:0:0 10 102',
      'exit 2:0:0 11 103',
    ]);
    expect(read).toThrow('overlap at line 2: 2:0:0 entered while 1:0:0 was inside');
  });

  it('throws on an exit by someone who is not inside', () => {
    expect(parse(['enter 1:0:0 10 100', 'exit 2:0:0 11 101'])).toThrow(
      '2:0:0 exited but 1:0:0 was inside',
    );
  });

  it('throws when the last caller never exits', () => {
    expect(parse(['enter 1:0:0 10 100'])).toThrow('1:0:0 entered and never exited');
  });
});
