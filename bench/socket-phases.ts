/**
 * Where one uncontended op's time goes, from this process's sockets: an op of raw-cycle or of the
 * lock writes its first requests (create + getChildren), reads their replies, writes the delete
 * and reads its reply. The phases between are the client's JavaScript (start -> first write,
 * replies -> delete written, delete's reply -> the op's end) or the round trips (write -> reply).
 * For bench/uncontended.ab.ts. Tooling only: it wraps net.Socket's write and push in this process.
 */
import net from 'node:net';
import { percentile } from './latency.stats';

export const PHASES = [
  'start->write',
  'round trip 1',
  'replies->delete',
  'round trip 2',
  'reply->end',
];

type SocketEvent = { kind: 'write' | 'read'; at: bigint; socket: net.Socket };

let recording: SocketEvent[] | undefined;
const installed = Symbol('socket-phases clock');

/** Wraps net.Socket's write and push once: every write and every chunk read is timed while recording. */
export function installSocketClock(): void {
  const socket = net.Socket.prototype as unknown as Record<string | symbol, unknown>;
  if (socket[installed]) return;
  const writeGeneric = socket._writeGeneric;
  const push = socket.push;
  if (typeof writeGeneric !== 'function' || typeof push !== 'function') {
    throw new Error(
      'net.Socket has no _writeGeneric/push on this Node: socket phases cannot be timed',
    );
  }
  socket._writeGeneric = function (this: net.Socket, ...args: unknown[]) {
    recording?.push({ kind: 'write', at: process.hrtime.bigint(), socket: this });
    return writeGeneric.apply(this, args);
  };
  socket.push = function (this: net.Socket, ...args: unknown[]) {
    if (args[0]) recording?.push({ kind: 'read', at: process.hrtime.bigint(), socket: this });
    return push.apply(this, args);
  };
  socket[installed] = true;
}

/**
 * Runs `op` and returns its phases in us (PHASES' order), or undefined when the traffic of the
 * socket it wrote first was not writes, replies, one write, replies, or when another socket
 * wrote or read meanwhile (a ping of another session, say): such ops are left out.
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
  const own = events[0]?.socket;
  if (!own || events.some((e) => e.socket !== own)) return undefined;
  const times = (kind: SocketEvent['kind']) =>
    events.filter((e) => e.kind === kind).map((e) => e.at);
  const writes = times('write');
  const reads = times('read');
  if (reads.length === 0) return undefined;
  const deletes = writes.filter((t) => t > reads[0]);
  if (deletes.length !== 1) return undefined;
  const [deleted] = deletes;
  const firstReplies = reads.filter((t) => t < deleted);
  const lastReplies = reads.filter((t) => t > deleted);
  if (lastReplies.length === 0) return undefined;
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
