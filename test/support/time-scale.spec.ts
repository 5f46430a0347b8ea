describe('TEST_TIME_SCALE', () => {
  const original = process.env.TEST_TIME_SCALE;
  afterEach(() => {
    if (original === undefined) delete process.env.TEST_TIME_SCALE;
    else process.env.TEST_TIME_SCALE = original;
  });

  const load = (): typeof import('./time-scale') => {
    let mod: typeof import('./time-scale') | undefined;
    jest.isolateModules(() => {
      mod = jest.requireActual<typeof import('./time-scale')>('./time-scale');
    });
    return mod!;
  };

  it('multiplies success deadlines and defaults to 1', () => {
    delete process.env.TEST_TIME_SCALE;
    expect(load().scaled(1500)).toBe(1500);
    process.env.TEST_TIME_SCALE = '2.5';
    expect(load().scaled(1500)).toBe(3750);
  });

  it.each(['0.5', 'fast', '-1'])('refuses %s with a message saying what to set', (raw) => {
    process.env.TEST_TIME_SCALE = raw;
    expect(load).toThrow(`TEST_TIME_SCALE=${raw}: expected a number >= 1`);
  });
});
