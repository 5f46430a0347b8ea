/** Owns the framing of one socket's bytes: whole frames out, a partial one kept, garbage refused. */

/**
 * The longest frame accepted from a server. ZooKeeper caps what it reads at `jute.maxbuffer`
 * but not what it sends (a large listing): this only refuses a length no server sends, the sign
 * of bytes that are not ZooKeeper's (the socket is dropped instead of buffering them).
 */
export const MAX_REPLY_FRAME_BYTES = 64 * 1024 * 1024;

/** A length prefix that no ZooKeeper frame has: the connection carries something else. */
export class FrameError extends Error {
  constructor(readonly length: number) {
    super(`a frame length of ${length} bytes is not ZooKeeper's`);
    this.name = 'FrameError';
  }
}

/**
 * Splits one socket's bytes into frames (an int32 length, then that many bytes). One reader per
 * socket, dropped with it: bytes left from one connection never complete a frame of the next.
 * Frames are views of the bytes read (no copy per frame), each with its length prefix.
 */
export class FrameReader {
  private partial?: Buffer;

  /** The complete frames `chunk` ends, in order; FrameError on an impossible length. */
  push(chunk: Buffer): Buffer[] {
    const data = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    this.partial = undefined;
    const frames: Buffer[] = [];
    let at = 0;
    while (data.length - at >= 4) {
      const length = data.readInt32BE(at);
      if (length < 0 || length > MAX_REPLY_FRAME_BYTES) throw new FrameError(length);
      const end = at + 4 + length;
      if (end > data.length) break;
      frames.push(data.subarray(at, end));
      at = end;
    }
    if (at < data.length) this.partial = data.subarray(at);
    return frames;
  }

  /** Bytes of a frame not complete yet. */
  get pendingBytes(): number {
    return this.partial?.length ?? 0;
  }
}
