/**
 * `@LeaderElection` runs a method only on the instance that leads (skipped, as
 * `onBusy: 'skip'`, elsewhere; also under `@Interval`), leadership hooks fire with the signal and
 * the fencing token, LeaderElectionService answers who leads and steps down, a shutdown hands
 * leadership over before anything else is torn down (the node is gone when close() returns,
 * not after the session timeout), and Terminus shows the elections. Two applications in one
 * process, each with its own ZkLockModule (its own session).
 */
import { INestApplication, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import {
  LeaderElection,
  LeaderElectionService,
  Leadership,
  LeadershipEnd,
  OnLeadershipGranted,
  OnLeadershipRevoked,
} from '../../lib';
import { ZkAdmin } from '../core/support/zk-admin';
import { HealthController } from './fixtures/health.controller';
import { createLockApp, testNamespace, waitFor, zkConnect } from './support/nest-app';

const PATH = '/elections/jobs';
/** Long: a hand-over that waited for the session to expire would not come within the test. */
const SESSION_MS = 60_000;

@Injectable()
class Jobs implements OnApplicationShutdown {
  ticks = 0;
  beats = 0;
  readonly granted: Leadership[] = [];
  readonly revoked: LeadershipEnd[] = [];
  ledAtShutdown?: boolean;

  constructor(readonly leaders: LeaderElectionService) {}

  @LeaderElection(PATH)
  tick(): string {
    this.ticks++;
    return 'ran';
  }

  @LeaderElection(PATH)
  @Interval(50)
  beat(): void {
    this.beats++;
  }

  @OnLeadershipGranted(PATH)
  onGranted(leadership: Leadership): void {
    this.granted.push(leadership);
  }

  @OnLeadershipRevoked(PATH)
  onRevoked(end: LeadershipEnd): void {
    this.revoked.push(end);
  }

  onApplicationShutdown(): void {
    this.ledAtShutdown = this.leaders.isLeader(PATH);
  }
}

interface Instance {
  app: INestApplication;
  jobs: Jobs;
}

describe('@LeaderElection, leadership hooks and LeaderElectionService', () => {
  const namespace = testNamespace('leader-election');
  const electionPath = `${namespace}${PATH}`;
  let admin: ZkAdmin;
  let a: Instance;
  let b: Instance;

  const start = async (participantId: string): Promise<Instance> => {
    const app = await createLockApp(
      {
        imports: [ScheduleModule.forRoot(), TerminusModule.forRoot({ logger: false })],
        providers: [Jobs],
        controllers: [HealthController],
      },
      { namespace, participantId, sessionTimeoutMs: SESSION_MS },
    );
    return { app, jobs: app.get(Jobs) };
  };
  const health = async (instance: Instance) =>
    (await request(instance.app.getHttpServer()).get('/health/details').expect(200)).body.info
      .zookeeper;

  beforeAll(async () => {
    admin = await ZkAdmin.connect(zkConnect());
    a = await start('a');
    await waitFor(() => a.jobs.granted.length === 1, 'a to lead');
    b = await start('b');
  });

  afterAll(async () => {
    await a?.app.close();
    await b?.app.close();
    await admin.removeTree(namespace);
    admin.close();
  });

  it('runs the method on the leader only, and the hook had the signal and the token', async () => {
    expect(a.jobs.tick()).toBe('ran');
    expect(b.jobs.tick()).toBeUndefined();
    expect([a.jobs.ticks, b.jobs.ticks]).toEqual([1, 0]);
    await waitFor(() => a.jobs.beats >= 3, 'the leader to run its @Interval job');
    expect(b.jobs.beats).toBe(0);
    const [granted] = a.jobs.granted;
    expect(granted).toMatchObject({ path: PATH, participantId: 'a' });
    expect(typeof granted.fencingToken).toBe('bigint');
    expect(granted.signal.aborted).toBe(false);
    expect(a.jobs.leaders.leadership(PATH)).toBe(granted);
  });

  it('answers who leads and who takes part, on every instance', async () => {
    expect([a.jobs.leaders.isLeader(PATH), b.jobs.leaders.isLeader(PATH)]).toEqual([true, false]);
    expect(b.jobs.leaders.leadership(PATH)).toBeNull();
    expect(await b.jobs.leaders.getLeader(PATH)).toEqual({ id: 'a', isLeader: true });
    expect(await a.jobs.leaders.getParticipants(PATH)).toEqual([
      { id: 'a', isLeader: true },
      { id: 'b', isLeader: false },
    ]);
    expect(b.jobs.leaders.participantId).toBe('b');
  });

  it('shows the elections in the Terminus details', async () => {
    expect((await health(a)).elections).toEqual({ [PATH]: { leader: true, leaderId: 'a' } });
    // The follower reads the leader's id (refreshed on each check).
    await waitFor(async () => (await health(b)).elections?.[PATH]?.leaderId === 'a', 'b to see a');
    expect((await health(b)).elections).toEqual({ [PATH]: { leader: false, leaderId: 'a' } });
  });

  it('stepDown() moves leadership: hooks fire on both sides, the jobs follow', async () => {
    const first = a.jobs.granted[0];
    await a.jobs.leaders.stepDown(PATH);
    expect(first.signal.aborted).toBe(true);
    expect(a.jobs.revoked).toEqual([{ reason: 'stepped-down' }]);
    await waitFor(() => b.jobs.granted.length === 1, 'b to lead');
    expect(b.jobs.granted[0].fencingToken).toBeGreaterThan(first.fencingToken);
    expect(a.jobs.tick()).toBeUndefined();
    expect(b.jobs.tick()).toBe('ran');
    const beatsOfA = a.jobs.beats;
    await waitFor(() => b.jobs.beats >= 3, 'the new leader to run its @Interval job');
    expect(a.jobs.beats).toBe(beatsOfA);
    expect(await a.jobs.leaders.getParticipants(PATH)).toEqual([
      { id: 'b', isLeader: true },
      { id: 'a', isLeader: false },
    ]);
  });

  it('a shutdown leaves the election first: the node is gone when close() returns', async () => {
    const leadership = b.jobs.granted[0];
    await b.app.close();
    // Left before any onApplicationShutdown ran, and not by waiting out the 60 s session.
    expect(b.jobs.ledAtShutdown).toBe(false);
    expect(b.jobs.revoked).toEqual([{ reason: 'closed' }]);
    expect(leadership.signal.aborted).toBe(true);
    const nodes = await admin.children(electionPath);
    expect(nodes).toHaveLength(1);
    expect(await admin.getData(`${electionPath}/${nodes[0]}`)).toBe('a');
    await waitFor(() => a.jobs.granted.length === 2, 'a to lead again');
    expect(a.jobs.granted[1].fencingToken).toBeGreaterThan(leadership.fencingToken);
  });
});
