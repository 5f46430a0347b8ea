// The OpenTelemetry instruments of a lock meter: their names, units, descriptions and buckets.
import type { Counter, Histogram, Meter, ObservableGauge } from '@opentelemetry/api';

/** Histogram buckets of waits and holds, in seconds: 1 ms (a handoff) to 10 minutes (a job). */
const SECONDS_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];

/** The instruments of docs/guides/observability.md (names, units and descriptions live here only). */
export interface LockInstruments {
  waitTime: Histogram;
  holdTime: Histogram;
  acquired: Counter;
  timeouts: Counter;
  lost: Counter;
  skipped: Counter;
  waiters: ObservableGauge;
  holders: ObservableGauge;
}

export function createLockInstruments(meter: Meter): LockInstruments {
  const seconds = (name: string, description: string) =>
    meter.createHistogram(name, {
      description,
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
  const counter = (name: string, description: string) => meter.createCounter(name, { description });
  const gauge = (name: string, description: string) =>
    meter.createObservableGauge(name, { description });
  return {
    waitTime: seconds(
      'zk_lock.wait.duration',
      'Time callers waited for a lock, by outcome (acquired, busy, timeout, aborted, failed)',
    ),
    holdTime: seconds(
      'zk_lock.hold.duration',
      'Time a lock was held, from its grant to its release',
    ),
    acquired: counter('zk_lock.acquired', 'Locks granted (re-entries not counted)'),
    timeouts: counter('zk_lock.timeouts', 'Waits that ended with LockTimeoutError'),
    lost: counter(
      'zk_lock.lost',
      'Held locks lost (session expired, connection lost, node deleted)',
    ),
    skipped: counter('zk_lock.skipped', 'Tries that found the lock busy: the caller skipped'),
    waiters: gauge('zk_lock.waiters', 'Callers of this process that wait for a lock'),
    holders: gauge('zk_lock.holders', 'Locks this process holds'),
  };
}
