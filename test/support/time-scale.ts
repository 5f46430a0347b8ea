/**
 * One knob for slow machines: `TEST_TIME_SCALE` (a number >= 1, default 1) multiplies every
 * deadline the tests give something that is expected to *succeed*: a server starting, an app
 * becoming ready, an uncontended lock being granted, the runner's per-test timeout. Waits whose
 * expiry is the very thing a test checks (a `waitTimeoutMs` that must end in LockTimeoutError)
 * are not scaled: they are exact by design and do not depend on the machine's speed.
 *
 *   TEST_TIME_SCALE=3 npm test    # a loaded 2-core machine, or a slow CI runner
 */
export const TEST_TIME_SCALE = parseScale(process.env.TEST_TIME_SCALE);

/** `ms` times TEST_TIME_SCALE, rounded. */
export function scaled(ms: number): number {
  return Math.round(ms * TEST_TIME_SCALE);
}

function parseScale(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 1) {
    throw new Error(`TEST_TIME_SCALE=${raw}: expected a number >= 1 (e.g. 2 on a loaded machine)`);
  }
  return value;
}
