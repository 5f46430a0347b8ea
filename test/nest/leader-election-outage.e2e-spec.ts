/**
 * Leadership hooks and logs through a ZooKeeper outage longer than the session timeout and the
 * participants' attempts to join again: three applications in one process (each its own
 * ZkLockModule, so its own sessions) on a server of this file's own, stopped and started again.
 * A revoke follows a grant, once: the instance that led runs its @OnLeadershipRevoked hook and
 * logs "No longer leads" once; the others, which never led, do neither.
 */
import { INestApplication, Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  LeaderElectionService,
  LeadershipEnd,
  OnLeadershipGranted,
  OnLeadershipRevoked,
  ZkLockModule,
} from '../../lib';
import { scaled } from '../support/time-scale';
import { ZooKeeperServer } from '../support/zookeeper';
import { capturingLogger, LogLine, testNamespace, waitFor } from './support/nest-app';

const PATH = '/elections/stock-report';
const SESSION_MS = scaled(2_000);
const CONNECT_MS = scaled(1_000);
/** Past the sessions' loss, a failed re-join and a failed retry 1 s later. */
const OUTAGE_MS = SESSION_MS + 3 * CONNECT_MS + scaled(3_000);

@Injectable()
class StockReport {
  /** What the hooks were told, in order: 'granted', 'revoked:<reason>'. */
  readonly told: string[] = [];

  @OnLeadershipGranted(PATH)
  granted(): void {
    this.told.push('granted');
  }

  @OnLeadershipRevoked(PATH)
  revoked(end: LeadershipEnd): void {
    this.told.push(`revoked:${end.reason}`);
  }
}

describe('leadership hooks and logs through a ZooKeeper outage', () => {
  const namespace = testNamespace('leader-election-outage');
  /** Every instance's log lines (Nest's Logger is one per process). */
  const lines: LogLine[] = [];
  const apps: INestApplication[] = [];
  let server: ZooKeeperServer;

  const start = async (participantId: string): Promise<StockReport> => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ZkLockModule.forRoot({
          connectionString: server.connectionString,
          namespace,
          participantId,
          sessionTimeoutMs: SESSION_MS,
          connectTimeoutMs: CONNECT_MS,
          telemetry: false,
        }),
      ],
      providers: [StockReport],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: capturingLogger(lines) });
    apps.push(app);
    await app.init();
    return app.get(StockReport);
  };
  const revokeLines = (id: string): string[] =>
    lines.map((l) => l.message).filter((m) => m.startsWith(`No longer leads "${PATH}" as ${id} `));

  beforeAll(async () => {
    server = await ZooKeeperServer.start();
  });

  afterAll(async () => {
    await Promise.allSettled(apps.map((app) => app.close()));
    await server?.stop();
  });

  it('runs the revoke hook and logs "No longer leads" on the instance that led only, once', async () => {
    const a = await start('a');
    await waitFor(() => a.told.includes('granted'), 'a to lead');
    const b = await start('b');
    const c = await start('c');
    const leaders = apps[0].get(LeaderElectionService);
    await waitFor(
      async () => (await leaders.getParticipants(PATH)).length === 3,
      'b and c to be in line',
    );

    const member = server.members[0];
    await member.stop();
    const stoppedAt = Date.now();
    await waitFor(
      () => Date.now() - stoppedAt > OUTAGE_MS && a.told.includes('revoked:lost'),
      'the outage to last past the loss and the failed re-joins',
      OUTAGE_MS * 3,
    );
    member.start();
    await member.waitServing();
    await waitFor(async () => {
      const participants = await leaders.getParticipants(PATH).catch(() => []);
      return (
        participants.length === 3 &&
        apps.some((app) => app.get(LeaderElectionService).isLeader(PATH))
      );
    }, 'every instance to be back in the election, one of them leading');

    // b and c never led before the outage: no hook, no line, however often their joins failed.
    expect([b.told, c.told].map((told) => told.filter((t) => t.startsWith('revoked')))).toEqual([
      [],
      [],
    ]);
    expect([revokeLines('b'), revokeLines('c')]).toEqual([[], []]);
    // a led and lost it: one hook, one line (a may lead again after the outage).
    expect(a.told.slice(0, 2)).toEqual(['granted', 'revoked:lost']);
    expect(a.told.filter((t) => t.startsWith('revoked'))).toHaveLength(1);
    expect(revokeLines('a')).toEqual([`No longer leads "${PATH}" as a (lost)`]);
    // Everywhere, grants and revokes alternate, starting with a grant.
    for (const told of [a.told, b.told, c.told]) {
      told.forEach((t, i) => expect(t).toMatch(i % 2 === 0 ? /^granted$/ : /^revoked:/));
    }
  });
});
