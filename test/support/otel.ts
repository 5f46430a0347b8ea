/**
 * The OpenTelemetry SDK with in-memory exporters, for tests: a MeterProvider whose reader the
 * test collects from, and a TracerProvider whose finished spans stay in memory.
 */
import type { Attributes, Meter, ObservableCallback } from '@opentelemetry/api';
import { DataPoint, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** Collects only when the test asks (no timer). */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export interface Point {
  attributes: Attributes;
  /** A number for counters and gauges; the count of recorded values for histograms. */
  value: number;
}

export class TestTelemetry {
  readonly spans = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.spans)],
  });
  private readonly reader = new TestReader();
  private readonly sdkMeters = new MeterProvider({ readers: [this.reader] });
  /** Observable callbacks added and not removed (through `meterProvider`). */
  liveCallbacks = 0;
  /** The SDK's MeterProvider, counting the observable callbacks added and removed. */
  readonly meterProvider = {
    getMeter: (name: string): Meter => this.counting(this.sdkMeters.getMeter(name)),
  };

  /** Every data point of `name` now. */
  async points(name: string): Promise<Point[]> {
    const { resourceMetrics, errors } = await this.reader.collect();
    if (errors.length > 0) throw errors[0];
    const metric = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []).map((p: DataPoint<unknown>) => ({
      attributes: p.attributes,
      value: typeof p.value === 'number' ? p.value : (p.value as { count: number }).count,
    }));
  }

  /** The value of `name` for exactly these attributes (0 when there is no such point). */
  async value(name: string, attributes: Attributes): Promise<number> {
    const same = (a: Attributes) =>
      JSON.stringify(sorted(a)) === JSON.stringify(sorted(attributes));
    return (await this.points(name)).find((p) => same(p.attributes))?.value ?? 0;
  }

  /** Names of every metric collected so far. */
  async names(): Promise<string[]> {
    const { resourceMetrics } = await this.reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name));
  }

  async shutdown(): Promise<void> {
    await this.sdkMeters.shutdown();
    await this.tracerProvider.shutdown();
  }

  private counting(meter: Meter): Meter {
    const createObservableGauge: Meter['createObservableGauge'] = (name, options) => {
      const gauge = meter.createObservableGauge(name, options);
      return Object.assign(Object.create(gauge), {
        addCallback: (cb: ObservableCallback) => (this.liveCallbacks++, gauge.addCallback(cb)),
        removeCallback: (cb: ObservableCallback) => (
          this.liveCallbacks--,
          gauge.removeCallback(cb)
        ),
      });
    };
    return Object.assign(Object.create(meter), { createObservableGauge });
  }
}

function sorted(attributes: Attributes): [string, unknown][] {
  return Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b));
}
