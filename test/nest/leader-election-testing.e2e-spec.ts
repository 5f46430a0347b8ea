/**
 * A service with `@LeaderElection` and leadership hooks unit-tested with
 * `ZkLockTestingModule.forRoot()`, no ZooKeeper server: the instance leads alone, a test that
 * expires the sessions sees leadership lost (hook, signal) and taken again with a greater token.
 * Without any ZkLockModule the bootstrap fails, naming the method.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import {
  LeaderElection,
  LeaderElectionService,
  Leadership,
  LeadershipEnd,
  OnLeadershipGranted,
  OnLeadershipRevoked,
} from '../../lib';
import { InMemoryZooKeeper, ZkLockTestingModule } from '../../lib/testing';
import { waitFor } from './support/nest-app';

@Injectable()
class Relay {
  readonly granted: Leadership[] = [];
  readonly revoked: LeadershipEnd[] = [];

  @LeaderElection('/elections/relay')
  relay(): string {
    return 'relayed';
  }

  @OnLeadershipGranted('/elections/relay')
  onGranted(leadership: Leadership): void {
    this.granted.push(leadership);
  }

  @OnLeadershipRevoked('/elections/relay')
  onRevoked(end: LeadershipEnd): void {
    this.revoked.push(end);
  }
}

describe('ZkLockTestingModule.forRoot(): leader election without ZooKeeper', () => {
  let moduleRef: TestingModule;
  let relay: Relay;

  beforeEach(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [ZkLockTestingModule.forRoot({ participantId: 'unit' })],
      providers: [Relay],
    }).compile();
    await moduleRef.init();
    relay = moduleRef.get(Relay);
    await waitFor(() => relay.granted.length === 1, 'leadership');
  });

  afterEach(() => moduleRef.close());

  it('leads alone: the method runs and the service says so', async () => {
    expect(relay.relay()).toBe('relayed');
    const leaders = moduleRef.get(LeaderElectionService);
    expect(leaders.isLeader('/elections/relay')).toBe(true);
    expect(await leaders.getLeader('/elections/relay')).toEqual({ id: 'unit', isLeader: true });
  });

  it('tells a loss when the test expires the sessions, then leads again', async () => {
    const first = relay.granted[0];
    moduleRef.get(InMemoryZooKeeper).expireSessions();
    await waitFor(() => relay.revoked.length === 1, 'the loss');
    expect(relay.revoked[0]).toMatchObject({ reason: 'lost' });
    expect(first.signal.aborted).toBe(true);
    await waitFor(() => relay.granted.length === 2, 'leadership again');
    expect(relay.granted[1].fencingToken).toBeGreaterThan(first.fencingToken);
  });
});

describe('@LeaderElection without ZkLockModule', () => {
  it('fails app.init() naming the decorated method and what to import', async () => {
    @Module({ providers: [Relay] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(async () => moduleRef.init()).rejects.toThrow(
      '@LeaderElection on Relay.relay: this application has no ZkLockModule. Import',
    );
    await moduleRef.close().catch(() => undefined); // close() rethrows the failed init
  });
});
