import { RequestDeadlines } from './request-deadlines';
import { vi } from 'vitest';

describe('RequestDeadlines', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('expires each request once its own timeout has passed, oldest first, with one timer', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    vi.advanceTimersByTime(400);
    deadlines.add(() => expired.push('b'));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(599);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    vi.advanceTimersByTime(399);
    expect(expired).toEqual(['a']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never expires a settled request, and stops once nothing is pending', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    const a = deadlines.add(() => expired.push('a'));
    vi.advanceTimersByTime(500);
    const b = deadlines.add(() => expired.push('b'));
    deadlines.settle(a);
    vi.advanceTimersByTime(500);
    expect(expired).toEqual([]);
    expect(vi.getTimerCount()).toBe(1); // re-armed for b
    deadlines.settle(b);
    deadlines.idle();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(expired).toEqual([]);
  });

  it('keeps its timer while a request is pending when idle() is asked', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    deadlines.idle();
    vi.advanceTimersByTime(1000);
    expect(expired).toEqual(['a']);
  });
});
