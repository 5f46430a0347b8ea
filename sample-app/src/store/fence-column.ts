import type { FencingToken } from './inventory.store';

/**
 * How a fencing token is stored in a `fence` column. A token is any bigint in [0, 2^128)
 * (`(czxid << 64) | (sequence << 32) | generation`, up to 39 decimal digits), past what a 64-bit
 * integer column holds, so PostgreSQL stores NUMERIC(39,0) and SQLite stores fixed-width text.
 */
export const FENCE_LIMIT = 1n << 128n;

/** Width of SQLite's text fence: 39 digits for 2^128 - 1, plus one spare. */
export const FENCE_TEXT_WIDTH = 40;

/** The token in decimal (PostgreSQL binds it to NUMERIC); throws when it is out of range. */
export function fenceDecimal(token: FencingToken): string {
  if (token < 0n || token >= FENCE_LIMIT) {
    throw new RangeError(
      `Fencing token ${token} is outside [0, 2^128): the fence columns hold at most 39 digits. ` +
        'A token comes from a lock handle; do not build one by hand.',
    );
  }
  return token.toString();
}

/**
 * The token zero-padded to FENCE_TEXT_WIDTH digits, for SQLite's TEXT fence: at a fixed width,
 * text order is numeric order, so `fence < ?` and `fence = ?` compare tokens correctly.
 */
export function fenceText(token: FencingToken): string {
  return fenceDecimal(token).padStart(FENCE_TEXT_WIDTH, '0');
}
