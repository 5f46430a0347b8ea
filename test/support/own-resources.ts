/**
 * A leak detector that counts only what the code under test created: the timers and sockets
 * started inside `trackOwnResources(work)` and by whatever that work went on to start (its async
 * descendants: socket callbacks, timer callbacks, promise continuations). The test runner's own
 * timers (a reporter's 100 ms tick, an RPC timeout) start in the runner's async context, so they
 * are never counted, whichever runner and reporter run the file.
 */
import { AsyncResource, createHook, executionAsyncId } from 'node:async_hooks';

/** The async resource types that keep a process alive and that a leak check reports. */
const WATCHED = new Set(['Timeout', 'Immediate', 'TCPWRAP']);

interface Live {
  type: string;
  resource: { hasRef?(): boolean; _idleTimeout?: number };
}

export interface OwnResources {
  /**
   * What the tracked work left open: ref'd timers and immediates, open sockets and servers,
   * described as "60000 ms timer" or "TCP socket". Waits up to `settleMs` for closed sockets to
   * be released (they leave within a few event-loop turns), then stops tracking.
   */
  leftOpen(settleMs?: number): Promise<string[]>;
}

export async function trackOwnResources(work: () => Promise<unknown>): Promise<OwnResources> {
  const scope = new AsyncResource('OwnResources');
  const own = new Set([scope.asyncId()]);
  const live = new Map<number, Live>();
  const hook = createHook({
    init(id, type, trigger, resource) {
      if (!own.has(trigger) && !own.has(executionAsyncId())) return;
      own.add(id);
      if (WATCHED.has(type)) live.set(id, { type, resource: resource as Live['resource'] });
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  try {
    await scope.runInAsyncScope(work);
  } catch (error) {
    hook.disable();
    throw error;
  }
  const open = (): string[] =>
    [...live.values()].filter((r) => r.type === 'TCPWRAP' || r.resource.hasRef?.()).map(describe);
  return {
    async leftOpen(settleMs = 2_000) {
      const deadline = Date.now() + settleMs;
      await new Promise((resolve) => setImmediate(resolve));
      while (open().some((r) => r.startsWith('TCP')) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      hook.disable();
      return open();
    },
  };
}

function describe({ type, resource }: Live): string {
  if (type === 'Timeout') return `${resource._idleTimeout} ms timer`;
  if (type === 'Immediate') return 'immediate';
  return 'TCP socket';
}
