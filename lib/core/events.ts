/** Owns how the library calls its users' listeners: none of them can disturb a lock. */
import { EventEmitter, errorMonitor } from 'node:events';

/**
 * Emits `event` to `emitter`'s listeners so that none can disturb the library: a listener that
 * throws leaves every lock, queue and session as it was, and the listeners after it still run
 * (as an AbortSignal's do). Its error goes to the emitter's 'error' listeners; with none, it is
 * thrown on its own on the next tick, an uncaught exception like one from any callback. The
 * emitters users listen to (the client, a lock handle, an election) emit through it.
 */
export function emitSafely(
  emitter: EventEmitter,
  event: string | symbol,
  args: unknown[],
): boolean {
  const listeners = emitter.rawListeners(event);
  if (event === 'error') {
    for (const monitor of emitter.rawListeners(errorMonitor)) Reflect.apply(monitor, emitter, args);
    if (listeners.length === 0) throw args[0];
  }
  for (const listener of listeners) {
    try {
      Reflect.apply(listener, emitter, args);
    } catch (err) {
      if (event !== 'error' && emitter.listenerCount('error') > 0) {
        emitSafely(emitter, 'error', [err]);
      } else {
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }
  return listeners.length > 0;
}

/** An EventEmitter that emits through emitSafely. */
export class SafeEmitter extends EventEmitter {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    return emitSafely(this, event, args);
  }
}
