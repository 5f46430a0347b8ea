import { errorMonitor } from 'node:events';
import { vi } from 'vitest';
import { SafeEmitter } from './events';

describe('SafeEmitter', () => {
  it('runs every listener when one throws, and returns normally', () => {
    const emitter = new SafeEmitter();
    const calls: string[] = [];
    emitter.on('error', () => calls.push('error'));
    emitter.on('x', () => calls.push('first'));
    emitter.on('x', () => {
      throw new Error('listener bug');
    });
    emitter.once('x', (value: number) => calls.push(`third ${value}`));
    expect(emitter.emit('x', 1)).toBe(true);
    expect(calls).toEqual(['first', 'error', 'third 1']);
    // A once listener went as usual.
    expect(emitter.listenerCount('x')).toBe(2);
    expect(emitter.emit('y')).toBe(false);
  });

  it("hands a listener's error to the 'error' listeners", () => {
    const emitter = new SafeEmitter();
    const bug = new Error('listener bug');
    const seen: unknown[] = [];
    emitter.on('error', (err: unknown) => seen.push(err));
    emitter.on('x', () => {
      throw bug;
    });
    emitter.emit('x');
    expect(seen).toEqual([bug]);
  });

  it("throws it on its own on the next tick when nothing listens to 'error', or an 'error' listener throws", () => {
    const later: (() => void)[] = [];
    const nextTick = vi
      .spyOn(process, 'nextTick')
      .mockImplementation(((fn: () => void) => void later.push(fn)) as typeof process.nextTick);
    try {
      const emitter = new SafeEmitter();
      const bug = new Error('listener bug');
      emitter.on('x', () => {
        throw bug;
      });
      expect(() => emitter.emit('x')).not.toThrow();
      const errorBug = new Error('error listener bug');
      const other = new SafeEmitter();
      other.on('error', () => {
        throw errorBug;
      });
      other.on('x', () => {
        throw bug;
      });
      expect(() => other.emit('x')).not.toThrow();
      expect(later).toHaveLength(2);
      expect(later[0]).toThrow(bug);
      expect(later[1]).toThrow(errorBug);
    } finally {
      nextTick.mockRestore();
    }
  });

  it("tells errorMonitor listeners of an 'error' first, as an EventEmitter does", () => {
    const emitter = new SafeEmitter();
    const seen: string[] = [];
    emitter.on(errorMonitor, () => seen.push('monitor'));
    emitter.on('error', () => seen.push('error'));
    emitter.on('x', () => {
      throw new Error('listener bug');
    });
    emitter.emit('x');
    expect(seen).toEqual(['monitor', 'error']);
  });

  it("throws an 'error' emitted with no listener, as an EventEmitter does", () => {
    const bug = new Error('no listener');
    expect(() => new SafeEmitter().emit('error', bug)).toThrow(bug);
  });
});
