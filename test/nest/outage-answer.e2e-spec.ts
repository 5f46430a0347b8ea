/**
 * Issue #32 §6: a decorated method that finished while ZooKeeper was down answered only once
 * its release had reached ZooKeeper: the handler was done, its client waited for the session to
 * come back or end (13 s with a 10 s session), and a handler whose lock was lost answered 503
 * only once ZooKeeper was back. The answer goes out when the method is done; the node stays
 * until it is deleted or its session ends, so another process is granted the lock only then.
 * The application and a lock-agent (another process waiting for the same lock) share a
 * ZooKeeper of this file's own, stopped under them.
 */
import { Controller, INestApplication, Injectable, Module, Param, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib';
import type { AgentReply } from '../core/fixtures/lock-agent';
import { killAllFixtures, LockAgent } from '../core/support/agents';
import { eventually, settledFlag, ZkAdmin } from '../core/support/zk-admin';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { scaled } from '../support/time-scale';
import { Gate, testNamespace } from './support/nest-app';

/** Outlives a restart of the server: the holder's session survives the first outage. */
const SESSION_MS = 20_000;

let gate = new Gate();
let entered = 0;

@Injectable()
class StockService {
  @DistributedLock('/stock/<id>')
  async reserve(id: string): Promise<{ reserved: string }> {
    entered++;
    await gate.opened;
    return { reserved: id };
  }
}

@Controller()
class OrdersController {
  constructor(private readonly stock: StockService) {}

  @Post('orders/:id')
  @DistributedLock('/orders/<id>')
  async pay(@Param('id') id: string): Promise<{ paid: string }> {
    entered++;
    await gate.opened;
    return { paid: id };
  }

  @Post('stock/:id')
  reserve(@Param('id') id: string): Promise<{ reserved: string }> {
    return this.stock.reserve(id);
  }
}

describe('the answer of a locked method while ZooKeeper is down', () => {
  const namespace = testNamespace('outage-answer');
  let server: ZooKeeperServer;
  let app: INestApplication;
  let locks: LockService;
  let agent: LockAgent;

  printServerLogOnFailure(() => server);
  beforeAll(async () => {
    server = await ZooKeeperServer.start();
    @Module({
      imports: [
        ZkLockModule.forRoot({
          connectionString: server.connectionString,
          sessionTimeoutMs: SESSION_MS,
          connectTimeoutMs: scaled(120_000),
          namespace,
        }),
      ],
      controllers: [OrdersController],
      providers: [StockService],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false }); // the 503's error line too
    await app.init();
    locks = app.get(LockService);
    agent = await LockAgent.start({
      connectionString: server.connectionString,
      sessionTimeoutMs: SESSION_MS,
      connectTimeoutMs: scaled(120_000), // it waits through the outages
    });
  });

  afterEach(async () => {
    gate.open();
    gate = new Gate();
    entered = 0;
    if (!server.members[0].running) {
      server.members[0].start(); // a test that failed with the server stopped
      await server.members[0].waitServing();
    }
    await eventually(
      'the application is connected',
      () => locks.state !== 'SUSPENDED' && locks.state !== 'LOST',
      scaled(60_000),
    );
  });

  afterAll(async () => {
    await agent?.close().catch(() => undefined);
    await killAllFixtures();
    await app?.close();
    await server?.stop(); // this file's own server: its data goes with it
  });

  /** The lock path's nodes, by sequence (the holder first). */
  const nodesOf = async (path: string): Promise<string[]> => {
    const admin = await ZkAdmin.connect(server.connectionString);
    try {
      const children = await admin.children(`${namespace}${path}`);
      return children.sort((a, b) => a.slice(-10).localeCompare(b.slice(-10)));
    } finally {
      admin.close();
    }
  };

  /** The request held by its handler, and the agent queued behind it for the same lock. */
  const holdWithAgentQueued = async (url: string, path: string) => {
    const answer = request(app.getHttpServer())
      .post(url)
      .then((res) => res);
    await eventually('the method holds the lock', () => entered === 1);
    const granted = agent.send({ op: 'acquire', path: `${namespace}${path}` });
    await eventually('the agent is queued', async () => (await nodesOf(path)).length === 2);
    const [holderNode] = await nodesOf(path);
    return { answer, answered: settledFlag(answer), granted, holderNode };
  };

  it.each([
    ['a route handler', '/orders/1', '/orders/1', { paid: '1' }],
    ['a service method a plain handler calls', '/stock/1', '/stock/1', { reserved: '1' }],
  ])(
    'answers as soon as %s is done, without waiting for its release to reach ZooKeeper',
    async (_kind, url, path, body) => {
      const held = await holdWithAgentQueued(url, path);
      let grantedWhileDown = false;
      void held.granted.then(() => (grantedWhileDown = !server.members[0].running));
      await server.members[0].stop();
      await eventually('the holder is disconnected', () => locks.state === 'SUSPENDED');
      gate.open();
      // Answered while the session is only suspended (its release cannot reach ZooKeeper):
      // not after the session's end, which is what it waited for before.
      await eventually(
        'the answer or the session ends',
        () => held.answered() || locks.state !== 'SUSPENDED',
        scaled(2 * SESSION_MS),
      );
      expect(held.answered()).toBe(true);
      expect(locks.state).toBe('SUSPENDED');
      expect(server.members[0].running).toBe(false);
      const res = await held.answer;
      expect(res.status).toBe(201);
      expect(res.body).toEqual(body);

      server.members[0].start();
      await server.members[0].waitServing();
      // The other process gets the lock once the released node is deleted, not before.
      const reply: AgentReply = await held.granted;
      expect(reply).toMatchObject({ type: 'acquired' });
      expect(grantedWhileDown).toBe(false);
      expect(await nodesOf(path)).not.toContain(held.holderNode);
      await agent.release(`${namespace}${path}`);
      await eventually('the holder is back', () => locks.state === 'RECONNECTED');
    },
  );

  it("answers 503 as soon as a running handler's lock is lost, without waiting for ZooKeeper", async () => {
    const held = await holdWithAgentQueued('/orders/2', '/orders/2');
    let lost = false;
    const onLost = (): void => void (lost = true);
    locks.on('lost', onLost);
    await server.members[0].stop();
    try {
      await eventually('the lock is lost', () => lost, scaled(3 * SESSION_MS));
      // With ZooKeeper still down: the release of the lost lock waited for a new session before.
      await eventually('the answer while ZooKeeper is down', () => held.answered());
    } finally {
      locks.off('lost', onLost);
    }
    expect(server.members[0].running).toBe(false);
    const res = await held.answer;
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'LOCK_LOST', lock: '/orders/2' });

    server.members[0].start();
    await server.members[0].waitServing();
    expect(await held.granted).toMatchObject({ type: 'acquired' });
    expect(await nodesOf('/orders/2')).not.toContain(held.holderNode);
    await agent.release(`${namespace}/orders/2`);
  });
});
