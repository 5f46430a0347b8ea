/** Reads the enter/exit log written by fixtures/cycle-worker.ts and checks it. */
import { readFileSync } from 'node:fs';

export interface CriticalSection {
  who: string;
  token: bigint;
  enteredAt: number;
  exitedAt: number;
}

/**
 * Parses the log into critical sections, in the order they were entered. Throws if two sections
 * overlap: every "enter" must be followed by the "exit" of the same caller before the next "enter".
 */
export function readCriticalSections(logFile: string): CriticalSection[] {
  const lines = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
  const sections: CriticalSection[] = [];
  let open: { who: string; token: bigint; at: number } | undefined;
  lines.forEach((line, index) => {
    const [kind, who, token, at] = line.split(' ');
    if (kind === 'enter') {
      if (open) {
        throw new Error(
          `overlap at line ${index + 1}: ${who} entered while ${open.who} was inside`,
        );
      }
      open = { who, token: BigInt(token), at: Number(at) };
    } else {
      if (!open || open.who !== who) {
        throw new Error(`line ${index + 1}: ${who} exited but ${open?.who ?? 'nobody'} was inside`);
      }
      sections.push({ who, token: open.token, enteredAt: open.at, exitedAt: Number(at) });
      open = undefined;
    }
  });
  if (open) throw new Error(`${open.who} entered and never exited`);
  return sections;
}

/** Most "enter" lines open at once in an enter/exit log (file order = real order). */
export function maxConcurrency(logFile: string): { max: number; sections: number } {
  let open = 0;
  let max = 0;
  let sections = 0;
  for (const line of readFileSync(logFile, 'utf8').split('\n').filter(Boolean)) {
    if (line.startsWith('enter')) {
      open++;
      sections++;
      max = Math.max(max, open);
    } else open--;
  }
  return { max, sections };
}

export interface ReadWriteCheck {
  reads: number;
  writes: number;
  /** Most readers inside at once, and most processes with a reader inside at once. */
  maxReaders: number;
  maxReaderProcesses: number;
  /** Write tokens in the order writers entered. */
  writeTokens: bigint[];
}

/**
 * Checks a read/write enter/exit log (fixtures/rw-worker.ts): a writer is alone inside, readers
 * may be together. Throws on a writer overlapping anyone; returns counts for further checks.
 */
export function checkReadWriteLog(logFile: string): ReadWriteCheck {
  const inside = new Map<string, 'R' | 'W'>();
  const result: ReadWriteCheck = {
    reads: 0,
    writes: 0,
    maxReaders: 0,
    maxReaderProcesses: 0,
    writeTokens: [],
  };
  readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .forEach((line, index) => {
      const [kind, mode, who, token] = line.split(' ') as [string, 'R' | 'W', string, string];
      if (kind === 'exit') return void inside.delete(who);
      const modes = [...inside.values()];
      if (mode === 'W' ? modes.length > 0 : modes.includes('W')) {
        throw new Error(
          `overlap at line ${index + 1}: ${mode} ${who} entered beside ${[...inside].join(', ')}`,
        );
      }
      inside.set(who, mode);
      if (mode === 'W') {
        result.writes++;
        result.writeTokens.push(BigInt(token));
        return;
      }
      result.reads++;
      const processes = new Set([...inside.keys()].map((w) => w.split(':')[0])).size;
      result.maxReaders = Math.max(result.maxReaders, inside.size);
      result.maxReaderProcesses = Math.max(result.maxReaderProcesses, processes);
    });
  return result;
}
