import { from, isObservable, Observable } from 'rxjs';

/**
 * A locked method that returns an Observable: runs it to completion while the lock is held (in
 * the lock's async context) and gives an Observable of the values it emitted. Anything else is
 * returned as is. Without this, the lock would be released before anyone subscribed.
 */
export function completeUnderLock(result: unknown): unknown {
  if (!isObservable(result)) return result;
  return new Promise<Observable<unknown>>((resolve, reject) => {
    const values: unknown[] = [];
    result.subscribe({
      next: (value) => values.push(value),
      error: reject,
      complete: () => resolve(from(values)),
    });
  });
}
