/** Owns node-zookeeper-client 1.1.3's table of error codes: which reply codes it can decode. */

/** Error codes node-zookeeper-client 1.1.3 can decode (its Exception table); others throw. */
export const DECODABLE_CODES: ReadonlySet<number> = new Set([
  0, -1, -2, -3, -4, -5, -6, -7, -8, -100, -101, -102, -103, -108, -110, -111, -112, -113, -114,
  -115,
]);

/** The first undecodable error code among the reply frames (int32 length, xid, zxid, err). */
export function undecodableCode(frames: Buffer): number | undefined {
  for (let at = 0; at + 20 <= frames.length; at += 4 + frames.readInt32BE(at)) {
    if (frames.readInt32BE(at) < 16) return undefined; // not a reply frame
    const err = frames.readInt32BE(at + 16);
    if (!DECODABLE_CODES.has(err)) return err;
  }
  return undefined;
}
