import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The interceptor already holds the lock of a handler it is about to call: it hands that call
 * over so the method wrapper runs the handler as is instead of locking a second time.
 * Taken once, so calls made later in the same async context lock normally.
 */
const handoff = new AsyncLocalStorage<{ spec?: object }>();

export function runWithHandoff<T>(spec: object, fn: () => T): T {
  return handoff.run({ spec }, fn);
}

export function takeHandoff(spec: object): boolean {
  const store = handoff.getStore();
  if (store?.spec !== spec) return false;
  store.spec = undefined;
  return true;
}
