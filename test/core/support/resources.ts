/** Snapshots of what keeps a Node process busy, to compare before/after many lock cycles. */
import { getEventListeners } from 'node:events';
import type { EventEmitter } from 'node:events';

const WATCHED_TYPES = ['Timeout', 'Immediate', 'TCPSocketWrap', 'TCPWrap'];

export interface ResourceSnapshot {
  /** Counts of process.getActiveResourcesInfo() entries by type (timers, sockets). */
  active: Record<string, number>;
  /** Listener counts on the given emitters, keyed "<label>:<event>". */
  listeners: Record<string, number>;
}

export function snapshotResources(
  emitters: Record<string, EventEmitter | EventTarget>,
): ResourceSnapshot {
  const active: Record<string, number> = Object.fromEntries(WATCHED_TYPES.map((t) => [t, 0]));
  for (const type of process.getActiveResourcesInfo()) {
    if (type in active) active[type]++;
  }
  const listeners: Record<string, number> = {};
  for (const [label, emitter] of Object.entries(emitters)) {
    if ('eventNames' in emitter) {
      for (const name of emitter.eventNames()) {
        listeners[`${label}:${String(name)}`] = emitter.listenerCount(name);
      }
    } else {
      listeners[`${label}:abort`] = getEventListeners(emitter, 'abort').length;
    }
  }
  return { active, listeners };
}
