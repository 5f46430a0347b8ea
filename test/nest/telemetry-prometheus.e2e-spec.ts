/**
 * The Prometheus setup of docs/guides/observability.md, as written there: a global MeterProvider with the Prometheus
 * exporter, registered before the application starts; the module measures on its own.
 */
import { Injectable } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { DistributedLock } from '../../lib';
import { freePort } from '../support/zookeeper';
import { createLockApp, testNamespace } from './support/nest-app';

@Injectable()
class Reports {
  @DistributedLock('/reports/report:<name>')
  async build(name: string) {
    return name;
  }
}

describe('Prometheus through @opentelemetry/exporter-prometheus', () => {
  it('serves the lock metrics, labelled by template, on /metrics', async () => {
    const port = await freePort();
    const exporter = new PrometheusExporter({ port });
    const provider = new MeterProvider({ readers: [exporter] });
    metrics.setGlobalMeterProvider(provider);
    try {
      const app = await createLockApp(
        { providers: [Reports] },
        { namespace: testNamespace('prometheus') },
      );
      try {
        await app.get(Reports).build('2026-11');
        await app.get(Reports).build('2026-12');
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        // Every line of a lock metric carries the template, never the report's name.
        const line = (metric: string, labels: string) =>
          new RegExp(
            `^${metric}\\{zk_lock_path="/reports/report:<name>",${labels}[^}]*\\} (\\S+)$`,
            'm',
          );
        expect(text).toMatch(line('zk_lock_acquired_total', ''));
        expect(text.match(line('zk_lock_acquired_total', ''))?.[1]).toBe('2');
        expect(
          text.match(line('zk_lock_wait_duration_count', 'zk_lock_outcome="acquired"'))?.[1],
        ).toBe('2');
        expect(text.match(line('zk_lock_hold_duration_count', ''))?.[1]).toBe('2');
        expect(text.match(line('zk_lock_holders', ''))?.[1]).toBe('0');
        expect(text).toMatch(/^zk_lock_wait_duration_bucket\{[^}]*le="0.005"\} \d+$/m);
        expect(text).not.toContain('2026-1');
      } finally {
        await app.close();
      }
    } finally {
      await provider.shutdown();
      await exporter.shutdown();
      metrics.disable();
    }
  });
});
