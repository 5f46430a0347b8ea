// Owns the option types of ZkLockModule.forRoot() and forRootAsync().
import type { LockTelemetryOptions } from '../../core/telemetry/lock-telemetry';
import type { ZkLockClientOptions } from '../../core/types';

/** Options of `ZkLockModule.forRoot()`: the core client's options plus defaults for decorators. */
export interface ZkLockModuleOptions extends ZkLockClientOptions {
  /**
   * Default wait of `@DistributedLock` methods and handlers that set none.
   * Undefined: wait until the lock is free, but for handler calls (`handlerWaitTimeoutMs`).
   */
  waitTimeoutMs?: number;
  /**
   * The wait of a decorated handler call (an HTTP route, a microservice message or event, a
   * WebSocket message, a GraphQL resolver) when neither its decorator nor the module's
   * `waitTimeoutMs` sets one (docs/reference/options.md "Waits"). Default 30_000.
   */
  handlerWaitTimeoutMs?: number;
  /**
   * OpenTelemetry metrics and spans (docs/guides/observability.md). Default: on when
   * `@opentelemetry/api` is installed (no-op until your SDK is registered); false turns it off.
   */
  telemetry?: false | LockTelemetryOptions;
  /**
   * This instance's id in the elections of `@LeaderElection` methods and leadership hooks (the
   * data of its election nodes, shown by `getLeader()` / `getParticipants()` everywhere, Curator
   * included). Default `<hostname>:<pid>`.
   */
  participantId?: string;
}

/** For `ZkLockModule.forRootAsync({ useClass | useExisting })`. */
export interface ZkLockOptionsFactory {
  createZkLockOptions(): ZkLockModuleOptions | Promise<ZkLockModuleOptions>;
}
