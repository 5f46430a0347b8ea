/**
 * The few jute records the in-memory ZooKeeper reads and writes (ZooKeeper's wire format: big
 * endian ints and longs, strings and buffers as an int32 length then bytes, -1 for null).
 */
export class JuteReader {
  private at = 0;

  constructor(private readonly buf: Buffer) {}

  int(): number {
    const value = this.buf.readInt32BE(this.at);
    this.at += 4;
    return value;
  }

  long(): bigint {
    const value = this.buf.readBigInt64BE(this.at);
    this.at += 8;
    return value;
  }

  bool(): boolean {
    return this.buf[this.at++] !== 0;
  }

  buffer(): Buffer | null {
    const length = this.int();
    if (length < 0) return null;
    const value = this.buf.subarray(this.at, this.at + length);
    this.at += length;
    return Buffer.from(value);
  }

  string(): string {
    return this.buffer()?.toString('utf8') ?? '';
  }

  strings(): string[] {
    const count = this.int();
    return Array.from({ length: Math.max(0, count) }, () => this.string());
  }
}

export class JuteWriter {
  private readonly parts: Buffer[] = [];

  int(value: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(value);
    this.parts.push(b);
    return this;
  }

  long(value: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(value);
    this.parts.push(b);
    return this;
  }

  bool(value: boolean): this {
    this.parts.push(Buffer.of(value ? 1 : 0));
    return this;
  }

  /** Another writer's fields, after these. */
  append(other: JuteWriter): this {
    this.parts.push(...other.parts);
    return this;
  }

  buffer(value: Buffer | null): this {
    if (value === null) return this.int(-1);
    this.int(value.length);
    this.parts.push(value);
    return this;
  }

  string(value: string): this {
    return this.buffer(Buffer.from(value, 'utf8'));
  }

  strings(values: readonly string[]): this {
    this.int(values.length);
    for (const value of values) this.string(value);
    return this;
  }

  /** The record as one frame: an int32 length, then the bytes. */
  frame(): Buffer {
    const body = Buffer.concat(this.parts);
    const length = Buffer.alloc(4);
    length.writeInt32BE(body.length);
    return Buffer.concat([length, body]);
  }
}
