import { vi } from 'vitest';

describe('TEST_TIME_SCALE', () => {
  const original = process.env.TEST_TIME_SCALE;
  afterEach(() => {
    if (original === undefined) delete process.env.TEST_TIME_SCALE;
    else process.env.TEST_TIME_SCALE = original;
  });

  /** A fresh copy of the module, so it reads TEST_TIME_SCALE again. */
  const load = async (): Promise<typeof import('./time-scale')> => {
    vi.resetModules();
    return import('./time-scale');
  };

  it('multiplies success deadlines and defaults to 1', async () => {
    delete process.env.TEST_TIME_SCALE;
    expect((await load()).scaled(1500)).toBe(1500);
    process.env.TEST_TIME_SCALE = '2.5';
    expect((await load()).scaled(1500)).toBe(3750);
  });

  it.each(['0.5', 'fast', '-1'])('refuses %s with a message saying what to set', async (raw) => {
    process.env.TEST_TIME_SCALE = raw;
    await expect(load()).rejects.toThrow(`TEST_TIME_SCALE=${raw}: expected a number >= 1`);
  });
});
