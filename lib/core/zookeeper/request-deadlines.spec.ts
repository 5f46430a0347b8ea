import { RequestDeadlines } from './request-deadlines';

describe('RequestDeadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('expires each request once its own timeout has passed, oldest first, with one timer', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    jest.advanceTimersByTime(400);
    deadlines.add(() => expired.push('b'));
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(599);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(399);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('never expires a settled request, and stops once nothing is pending', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    const a = deadlines.add(() => expired.push('a'));
    jest.advanceTimersByTime(500);
    const b = deadlines.add(() => expired.push('b'));
    deadlines.settle(a);
    jest.advanceTimersByTime(500);
    expect(expired).toEqual([]);
    expect(jest.getTimerCount()).toBe(1); // re-armed for b
    deadlines.settle(b);
    deadlines.idle();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(5000);
    expect(expired).toEqual([]);
  });

  it('keeps its timer while a request is pending when idle() is asked', () => {
    const deadlines = new RequestDeadlines(1000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    deadlines.idle();
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['a']);
  });
});
