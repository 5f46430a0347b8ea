// Owns the bootstrap walk that registers leadership hooks and joins the elections.
import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { electionPathsOf, hooksOf } from '../decorators/leader-election.metadata';
import { injectedLeaderElections } from './leader-election.injection';
import { LeaderElectionService } from './leader-election.service';

/**
 * At bootstrap (after every onModuleInit, so hook providers are ready), finds the classes with
 * `@LeaderElection` methods or leadership hooks whose module sees this service, registers their
 * hooks, then joins each of their elections (as @nestjs/schedule's explorer registers jobs).
 */
@Injectable()
export class LeaderElectionExplorer implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly elections: LeaderElectionService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const instances = [...this.discovery.getProviders(), ...this.discovery.getControllers()]
      .filter((wrapper) => wrapper.isDependencyTreeStatic() && wrapper.instance)
      .map((wrapper) => wrapper.instance as object);
    const paths = new Set<string>();
    for (const instance of new Set(instances)) {
      const owned = electionPathsOf(instance.constructor);
      if (owned.length === 0 || injectedLeaderElections(instance) !== this.elections) continue;
      for (const path of owned) paths.add(path);
      this.registerHooks(instance);
    }
    await Promise.all([...paths].map((path) => this.elections.join(path)));
  }

  private registerHooks(instance: object): void {
    const methods = instance as Record<string, (arg: unknown) => unknown>;
    for (const name of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
      for (const hook of hooksOf(methods[name])) {
        this.elections.addHook(hook.path, hook.event, (arg) => methods[name].call(instance, arg));
      }
    }
  }
}
