/**
 * Every module option is checked at bootstrap, before connecting, naming the
 * option; the module's waitTimeoutMs is the default of every wait, LockService's included.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  InvalidLockOptionsError,
  LeaderElection,
  LeaderElectionService,
  LockService,
  LockTimeoutError,
  ZkLockClient,
  ZkLockModule,
  ZkLockModuleOptions,
} from '../../lib';
import { InMemoryZooKeeper } from '../../lib/testing';
import { useLockApp, testNamespace, zkConnect } from './support/nest-app';

/** Nothing listens there: a bootstrap that tried to connect would fail otherwise, and later. */
const NOWHERE = '127.0.0.1:1';

describe('ZkLockModule options are checked at bootstrap, before connecting', () => {
  it.each([
    ['waitTimeoutMs', { waitTimeoutMs: 'x' }],
    ['waitTimeoutMs', { waitTimeoutMs: -1 }],
    ['handlerWaitTimeoutMs', { handlerWaitTimeoutMs: '30s' }],
    ['sessionTimeoutMs', { sessionTimeoutMs: '10s' }],
    ['connectTimeoutMs', { connectTimeoutMs: 0 }],
    ['requestTimeoutMs', { requestTimeoutMs: Number.NaN }],
    ['parentCleanupDelayMs', { parentCleanupDelayMs: -5 }],
    ['maxNodesPerPath', { maxNodesPerPath: 1.5 }],
    ['sessions', { sessions: 0 }],
    ['sessions', { sessions: 17 }],
    ['connectionString', { connectionString: '' }],
    ['connectionString', { connectionString: '127.0.0.1:99999' }],
    ['nodeData', { nodeData: 'orders' }],
    ['maxWaitersPerPath', { maxWaitersPerPath: 0 }],
    ['maxWaiters', { maxWaiters: 2.5 }],
    ['onWarning', { onWarning: 'log' }],
    ['participantId', { participantId: 7 }],
  ])('fails naming %s for %j', async (option, bad) => {
    const boot = Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({
          connectionString: NOWHERE,
          ...(bad as object),
        } as ZkLockModuleOptions),
      ],
    }).compile();
    // Before connecting: a bootstrap that connected first would fail with the connect's
    // ZooKeeperUnavailableError (nothing listens at NOWHERE), not with the module's own check.
    await expect(boot).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(boot).rejects.toThrow(new RegExp(`ZkLockModule.forRoot\\(\\): ${option} `));
  });

  it('checks forRootAsync options the same way, once the factory has given them', async () => {
    const boot = Test.createTestingModule({
      imports: [
        ZkLockModule.forRootAsync({
          useFactory: () => ({ connectionString: NOWHERE, waitTimeoutMs: '5s' as never }),
        }),
      ],
    }).compile();
    await expect(boot).rejects.toThrow(/ZkLockModule.forRoot\(\): waitTimeoutMs must be/);
  });

  it('checks the core client the same way', async () => {
    const connect = ZkLockClient.connect({
      connectionString: NOWHERE,
      sessionTimeoutMs: '10s' as never,
    });
    await expect(connect).rejects.toBeInstanceOf(InvalidLockOptionsError);
    await expect(connect).rejects.toThrow(/ZkLockClient.connect\(\): sessionTimeoutMs /);
  });
});

@Injectable()
class Elected {
  @LeaderElection('/elections/report')
  report(): string {
    return 'ran';
  }
}

describe("the module's participantId is checked before anything connects", () => {
  let zookeeper: InMemoryZooKeeper;

  beforeAll(async () => {
    zookeeper = await InMemoryZooKeeper.start();
  });
  afterAll(() => zookeeper?.close());

  /** An app with a @LeaderElection method on the in-memory server, initialized. */
  const boot = async (participantId: string) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({ connectionString: zookeeper.connectionString, participantId }),
      ],
      providers: [Elected],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    return app.init();
  };

  it('fails bootstrap over 1,024 bytes of UTF-8, naming the option, with no session opened', async () => {
    // 513 characters, 1,026 bytes: the limit counts bytes.
    const outcome = await boot('é'.repeat(513)).catch((err: unknown) => err);
    expect(outcome).toBeInstanceOf(InvalidLockOptionsError);
    expect((outcome as Error).message).toContain(
      'ZkLockModule.forRoot(): participantId must be a string of at most 1024 bytes, got 1026 bytes',
    );
    expect(zookeeper.sessionIds).toEqual([]);
  });

  it('takes part with an id of exactly 1,024 bytes', async () => {
    const id = 'x'.repeat(1024);
    const app = await boot(id);
    try {
      expect(await app.get(LeaderElectionService).getLeader('/elections/report')).toEqual({
        id,
        isLeader: true,
      });
    } finally {
      await app.close();
    }
  });
});

describe("the module's waitTimeoutMs applies to LockService too", () => {
  const WAIT_MS = 200;
  const namespace = testNamespace('module-options');
  const fixture = useLockApp({}, { namespace, waitTimeoutMs: WAIT_MS });
  let other: ZkLockClient;

  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  });
  afterAll(() => other?.close());

  it('withLock, acquire, the read/write sides and a semaphore give up after it', async () => {
    const locks: LockService = fixture.locks;
    const held = await other.acquire('/busy');
    const writer = await other.writeLock('/rw').acquire();
    const lease = await other.semaphore('/sem', { maxLeases: 1 }).acquire();
    try {
      const waits: [string, Promise<unknown>][] = [
        ['withLock', locks.withLock('/busy', () => 'ran')],
        ['acquire', locks.acquire('/busy')],
        ['withLockAll', locks.withLockAll(['/busy', '/free'], () => 'ran')],
        ['readLock', locks.readLock('/rw').withLock(() => 'ran')],
        ['semaphore', locks.semaphore('/sem', { maxLeases: 1 }).withLease(() => 'ran')],
      ];
      // Each outcome is taken as it comes (the waits run at once).
      const outcomes = waits.map(([what, wait]) =>
        wait.then(
          () => new Error(`${what} ran`),
          (err: unknown) => err,
        ),
      );
      for (const [i, [what]] of waits.entries()) {
        const error = await outcomes[i];
        expect([what, error]).toEqual([what, expect.any(LockTimeoutError)]);
        expect([what, (error as LockTimeoutError).waitTimeoutMs]).toEqual([what, WAIT_MS]);
      }
      // A call's own waitTimeoutMs still wins.
      await expect(
        locks.withLock('/busy', () => 'ran', { waitTimeoutMs: 0 }),
      ).rejects.toMatchObject({ waitTimeoutMs: 0 });
    } finally {
      await Promise.all([held.release(), writer.release(), lease.release()]);
    }
  });
});
