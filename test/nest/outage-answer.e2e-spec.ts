/**
 * A decorated method that finished while ZooKeeper was down or silent answers without waiting
 * for its release's round trip: the answer goes out when the method is done (the client already
 * SUSPENDED or LOST), or once the release has had its short bound (a server that answers
 * nothing, the client still CONNECTED); a handler whose lock was lost answers 503 at once. The
 * node stays until it is deleted or its session ends, so another process is granted the lock
 * only then. The application and a lock-agent (another process waiting for the same lock) share
 * a ZooKeeper of this file's own, stopped under them, or silenced by a TCP proxy in front of it
 * that holds what the application sends.
 */
import { Controller, INestApplication, Injectable, Module, Param, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLock, LockService, ZkLockModule } from '../../lib';
import type { AgentReply } from '../core/fixtures/lock-agent';
import { killAllFixtures, LockAgent } from '../core/support/agents';
import { TcpProxy } from '../core/support/tcp-proxy';
import { eventually, settledFlag, ZkAdmin } from '../core/support/zk-admin';
import { ZooKeeperServer } from '../support/zookeeper';
import { printServerLogOnFailure } from '../support/server-log-on-failure';
import { scaled } from '../support/time-scale';
import { Gate, testNamespace } from './support/nest-app';

/** Outlives a restart of the server: the holder's session survives the first outage. */
const SESSION_MS = 20_000;
/** The session of an application whose lock an outage loses: lost a few seconds in. */
const SHORT_SESSION_MS = 4_000;

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

/** The application, its session outliving a restart of the server unless told otherwise. */
async function startApp(
  connectionString: string,
  namespace: string,
  sessionTimeoutMs = SESSION_MS,
): Promise<INestApplication> {
  @Module({
    imports: [
      ZkLockModule.forRoot({
        connectionString,
        sessionTimeoutMs,
        connectTimeoutMs: scaled(120_000),
        namespace,
      }),
    ],
    controllers: [OrdersController],
    providers: [StockService],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false }); // the 503's error line too
  await app.init();
  return app;
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
    app = await startApp(server.connectionString, namespace);
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
  const holdWithAgentQueued = async (url: string, path: string, on = app) => {
    const answer = request(on.getHttpServer())
      .post(url)
      .then((res) => res);
    await eventually('the method holds the lock', () => entered === 1);
    const granted = agent.send({ op: 'acquire', path: `${namespace}${path}` });
    await eventually('the agent is queued', async () => (await nodesOf(path)).length === 2);
    const [holderNode] = await nodesOf(path);
    return { answer, answered: settledFlag(answer), granted, holderNode };
  };

  /**
   * The answer of `held`, checked to come while the client is still in `state` (the answer or
   * the client's next state, whichever comes first).
   */
  const answeredWhile = async (
    held: { answer: Promise<request.Response>; answered: () => boolean },
    client: LockService,
    state: LockService['state'],
  ): Promise<request.Response> => {
    await eventually(
      `the answer or the client leaves ${state}`,
      () => held.answered() || client.state !== state,
      scaled(2 * SESSION_MS),
    );
    expect(held.answered()).toBe(true);
    expect(client.state).toBe(state);
    return held.answer;
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
      const res = await answeredWhile(held, locks, 'SUSPENDED');
      expect(server.members[0].running).toBe(false);
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
    // An application of its own with a short session: the outage outlasts it.
    const shortLived = await startApp(server.connectionString, namespace, SHORT_SESSION_MS);
    try {
      const shortLocks = shortLived.get(LockService);
      const held = await holdWithAgentQueued('/orders/2', '/orders/2', shortLived);
      let lost = false;
      const onLost = (): void => void (lost = true);
      shortLocks.on('lost', onLost);
      await server.members[0].stop();
      try {
        await eventually('the lock is lost', () => lost, scaled(3 * SHORT_SESSION_MS));
        // With ZooKeeper still down: the release of the lost lock waited for a new session before.
        await eventually('the answer while ZooKeeper is down', () => held.answered());
      } finally {
        shortLocks.off('lost', onLost);
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
    } finally {
      await shortLived.close();
    }
  });
  it("answers a silent server's client without waiting for the release's reply or the suspicion of its session", async () => {
    // The application reaches the server through a proxy; the agent goes straight to it.
    const proxy = await TcpProxy.start(server.members[0].clientPort);
    const silent = await startApp(proxy.connectionString, namespace);
    try {
      const silentLocks = silent.get(LockService);
      const stateListeners = silentLocks.client.listenerCount('state');
      const held = await holdWithAgentQueued('/orders/3', '/orders/3', silent);
      let requestsHeld = true;
      let grantedWhileHeld = false;
      void held.granted.then(() => (grantedWhileHeld = requestsHeld));
      // The server answers nothing and the socket stays up (a partition, a frozen server): the
      // client stays CONNECTED until its session clock suspects the silence.
      proxy.holdRequests();
      gate.open();
      const res = await answeredWhile(held, silentLocks, 'CONNECTED');
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ paid: '3' });
      // Nothing of the answered call keeps listening to the client's state.
      expect(silentLocks.client.listenerCount('state')).toBe(stateListeners);
      // The release is still on its way: the node stays, nobody else holds the lock.
      expect(await nodesOf('/orders/3')).toContain(held.holderNode);

      requestsHeld = false;
      proxy.releaseRequests(); // the held delete reaches the server
      expect(await held.granted).toMatchObject({ type: 'acquired' });
      expect(grantedWhileHeld).toBe(false);
      expect(await nodesOf('/orders/3')).not.toContain(held.holderNode);
      await agent.release(`${namespace}/orders/3`);
      expect(silentLocks.client.listenerCount('state')).toBe(stateListeners);
    } finally {
      proxy.releaseRequests();
      await silent.close();
      await proxy.close();
    }
  });
  it('leaves no listener on the client once its answer is given', async () => {
    const fresh = await startApp(server.connectionString, namespace);
    try {
      const freshLocks = fresh.get(LockService);
      const stateListeners = freshLocks.client.listenerCount('state');
      gate.open();
      for (const id of ['4', '5']) {
        const res = await request(fresh.getHttpServer()).post(`/orders/${id}`);
        expect(res.status).toBe(201);
        expect(freshLocks.client.listenerCount('state')).toBe(stateListeners);
      }
    } finally {
      await fresh.close();
    }
  });
});
