/**
 * Where one uncontended op's time goes, from this process's sockets: an op of raw-cycle or of the
 * lock writes its first requests (create + getChildren), reads their replies, writes the delete
 * and reads its reply. The phases between are the client's JavaScript (start -> first write,
 * replies -> delete written, delete's reply -> the op's end) or the round trips (write -> reply).
 * For bench/uncontended.ab.ts. Tooling only: it wraps net.Socket's write and push in this process.
 */
import net from 'node:net';
import { Duplex } from 'node:stream';
import { percentile } from './latency.stats';

export const PHASES = [
  'start->write',
  'round trip 1',
  'replies->delete',
  'round trip 2',
  'reply->end',
];

type SocketEvent = ['write' | 'read', bigint];

let recording: SocketEvent[] | undefined;

/** Wraps the socket methods once: every write and every chunk read is timed while recording. */
export function installSocketClock(): void {
  const socket = net.Socket.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  if (socket.__phasesClock) return;
  const writeGeneric = socket._writeGeneric;
  socket._writeGeneric = function (this: unknown, ...args: unknown[]) {
    recording?.push(['write', process.hrtime.bigint()]);
    return writeGeneric.apply(this, args);
  };
  socket.push = function (this: Duplex, chunk: unknown, encoding?: unknown) {
    if (chunk) recording?.push(['read', process.hrtime.bigint()]);
    return (Duplex.prototype.push as (...args: unknown[]) => boolean).call(this, chunk, encoding);
  };
  socket.__phasesClock = () => undefined;
}

/**
 * Runs `op` and returns its phases in us (PHASES' order), or undefined when its socket traffic
 * was not writes, replies, one write, replies (a ping in between, say).
 */
export async function timePhases(op: () => Promise<void>): Promise<number[] | undefined> {
  const events: SocketEvent[] = (recording = []);
  const started = process.hrtime.bigint();
  try {
    await op();
  } finally {
    recording = undefined;
  }
  const ended = process.hrtime.bigint();
  const times = (kind: SocketEvent[0]) => events.filter((e) => e[0] === kind).map((e) => e[1]);
  const writes = times('write');
  const reads = times('read');
  if (writes.length === 0 || reads.length === 0) return undefined;
  const deletes = writes.filter((t) => t > reads[0]);
  if (deletes.length !== 1) return undefined;
  const [deleted] = deletes;
  const firstReplies = reads.filter((t) => t < deleted);
  const lastReplies = reads.filter((t) => t > deleted);
  if (firstReplies.length === 0 || lastReplies.length === 0) return undefined;
  const us = (from: bigint, to: bigint) => Number(to - from) / 1e3;
  return [
    us(started, writes[0]),
    us(writes[0], firstReplies[0]),
    us(firstReplies[firstReplies.length - 1], deleted),
    us(deleted, lastReplies[0]),
    us(lastReplies[lastReplies.length - 1], ended),
  ];
}

/** The p50 of each phase over `ops` (each timePhases' result). */
export function phaseMedians(ops: readonly number[][]): number[] {
  return PHASES.map((_, i) =>
    percentile(
      ops.map((phases) => phases[i]),
      50,
    ),
  );
}
