// Owns the bootstrap check that every decorated instance got its LockService.
import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ZkLockError } from '../../core/errors';
import type { ZkLockClient } from '../../core/client/lock-client';
import { hasLockedMethods, lockSpecsOf } from '../decorators/distributed-lock.metadata';
import { InjectZkLockClient } from '../decorators/inject-zk-lock-client.decorator';
import { injectedLockService, lockServiceHint } from './distributed-lock.wrapper';
import { LockService } from './lock.service';
import { ZK_LOCK_OWN_SERVER } from '../module/zk-lock.constants';

/**
 * At `onModuleInit`, fails the bootstrap naming the methods of an instance with
 * `@DistributedLock` methods that got no LockService (its module cannot see a non-global
 * ZkLockModule), after closing this module's session: Nest runs no shutdown hook after a failed
 * init. Without any ZkLockModule there is no explorer: distributed-lock.bootstrap-check.ts fails
 * it. Warns once when ZkLockModule.forRoot() is imported more than once.
 */
@Injectable()
export class DistributedLockExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly locks: LockService,
    @InjectZkLockClient() private readonly client: ZkLockClient,
    @Optional()
    @Inject(ZK_LOCK_OWN_SERVER)
    private readonly ownServer?: { close(): Promise<void> },
  ) {}

  async onModuleInit(): Promise<void> {
    const instances = [...this.discovery.getProviders(), ...this.discovery.getControllers()]
      .filter((wrapper) => wrapper.isDependencyTreeStatic())
      .map((wrapper) => wrapper.instance as unknown);
    this.warnIfImportedTwice(instances);
    const blind = instances.filter(hasLockedMethods).filter((i) => !injectedLockService(i));
    if (blind.length === 0) return;
    const owner = blind[0].constructor.name;
    const methods = [...new Set(blind.flatMap((i) => lockSpecsOf(i).map((spec) => spec.where)))];
    await this.client.close();
    await this.ownServer?.close();
    throw new ZkLockError(
      `@DistributedLock on ${methods.join(', ')}: no LockService is visible to ${owner} ` +
        `(ZkLockModule is imported, but not global, in another module). ${lockServiceHint(owner)}`,
    );
  }

  /** Each forRoot() opens its own session: its locks exclude the other's, even in one request. */
  private warnIfImportedTwice(instances: unknown[]): void {
    const services = [...new Set(instances.filter((i) => i instanceof LockService))];
    if (services.length < 2 || services[0] !== this.locks) return;
    new Logger(LockService.name).warn(
      `ZkLockModule.forRoot() is imported ${services.length} times in this application: each ` +
        'opens its own ZooKeeper session, and a class locks through the one its module imports, ' +
        'so a handler and a service of different modules do not share (re-enter) a lock. ' +
        'Import it once, with isGlobal: true or from one shared module.',
    );
  }
}
