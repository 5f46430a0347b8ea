// Owns the wiring of OpenTelemetry to the module's client, labelled by the decorators' templates.
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { ZkLockClient } from '../../core/client/lock-client';
import { LockTelemetry } from '../../core/telemetry/lock-telemetry';
import { InjectZkLockClient } from '../decorators/inject-zk-lock-client.decorator';
import type { ZkLockModuleOptions } from './zk-lock-module-options.interface';
import { hasLockedMethods, lockSpecOf } from '../decorators/distributed-lock.metadata';
import { ZK_LOCK_MODULE_OPTIONS } from './zk-lock.module-definition';

/**
 * OpenTelemetry for the module's client (docs/guides/observability.md): on whenever
 * `@opentelemetry/api` is installed, unless the module option `telemetry` is false. Labels
 * are the `@DistributedLock` templates of the application plus `telemetry.pathTemplates`.
 */
@Injectable()
export class ZkLockTelemetry implements OnModuleInit, OnModuleDestroy {
  private telemetry?: LockTelemetry;

  constructor(
    @InjectZkLockClient() private readonly client: ZkLockClient,
    @Inject(ZK_LOCK_MODULE_OPTIONS) private readonly options: ZkLockModuleOptions,
    private readonly discovery: DiscoveryService,
  ) {}

  /** The path templates that label metrics; empty when telemetry is off or the API missing. */
  get pathTemplates(): string[] {
    return this.telemetry?.labels.templates ?? [];
  }

  onModuleInit(): void {
    const option = this.options.telemetry;
    if (option === false) return;
    this.telemetry = LockTelemetry.attach(this.client, {
      ...option,
      pathTemplates: [...(option?.pathTemplates ?? []), ...this.decoratorTemplates()],
      // A decorated call is labelled by its own template, not another matching the same path:
      // the hold passes it as the call's pathTemplate; no callTemplate labels the module's other
      // calls.
      callTemplate: undefined,
    });
  }

  onModuleDestroy(): void {
    this.telemetry?.close();
    this.telemetry = undefined;
  }

  /**
   * The string templates of every `@DistributedLock` method of the application's classes; for a
   * `@DistributedSemaphore`, its mutex's (leases emit no lock events).
   */
  private decoratorTemplates(): string[] {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    const templates = new Set<string>();
    for (const { instance } of wrappers) {
      if (!hasLockedMethods(instance)) continue;
      for (const method of methodsOf(Object.getPrototypeOf(instance))) {
        const spec = lockSpecOf(method);
        const template = spec?.metricsTemplate;
        if (template === undefined) continue;
        // A semaphore's leases emit no lock events: its mutex's, on `<path>/locks`.
        templates.add(spec!.options.maxLeases === undefined ? template : `${template}/locks`);
      }
    }
    return [...templates];
  }
}

/** The methods of a prototype chain, up to Object.prototype. */
function methodsOf(proto: object | null): ((...args: unknown[]) => unknown)[] {
  const methods = [];
  for (; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (typeof value === 'function' && name !== 'constructor') methods.push(value);
    }
  }
  return methods;
}
