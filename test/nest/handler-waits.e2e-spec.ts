/**
 * A decorated handler with no `waitTimeoutMs` anywhere stops waiting for a busy lock after the
 * module's `handlerWaitTimeoutMs` on every transport, not only HTTP: a TCP microservice message,
 * a WebSocket message (`@nestjs/platform-ws`) and a GraphQL mutation (Apollo) end with
 * LOCK_TIMEOUT, and their place among the path's `maxWaitersPerPath` (1 here) is given back: no
 * wait is left, no node of ours queued, and an HTTP request on the same path is then answered
 * LOCK_TIMEOUT, not LOCK_QUEUE_FULL. One application serves the four transports; the busy lock
 * is held by another ZooKeeper session.
 */
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Controller, Get, INestApplication, Module, Param, UseFilters } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Args, GraphQLModule, Mutation, Query, Resolver } from '@nestjs/graphql';
import {
  ClientProxy,
  ClientProxyFactory,
  MessagePattern,
  Payload,
  Transport,
} from '@nestjs/microservices';
import { WsAdapter } from '@nestjs/platform-ws';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { firstValueFrom } from 'rxjs';
import request from 'supertest';
import { WebSocket } from 'ws';
import { DistributedLock, LockEvents, ZK_LOCK_CLIENT, ZkLockClient, ZkLockModule } from '../../lib';
import { settlesWithin } from '../core/support/zk-admin';
import { freePort } from '../support/zookeeper';
import { SendExceptionFilter } from './fixtures/send-exception.filter';
import { testNamespace, waitFor, zkConnect } from './support/nest-app';

/** Short, so that the test does not wait the 30 s default; the test asserts outcomes only. */
const HANDLER_WAIT_MS = 300;

@Controller('take')
class TakeController {
  @Get(':key')
  @DistributedLock('/held/<key>')
  take(@Param('key') key: string): string {
    return key;
  }
}

@Controller()
class TakeHandlers {
  @MessagePattern('take')
  @DistributedLock('/held/<key>')
  take(@Payload() data: { key: string }): string {
    return data.key;
  }
}

@WebSocketGateway()
@UseFilters(SendExceptionFilter)
class TakeGateway {
  @SubscribeMessage('take')
  @DistributedLock('/held/<key>')
  take(@MessageBody() data: { key: string }) {
    return { event: 'taken', data: data.key };
  }
}

@Resolver()
class TakeResolver {
  @Query(() => String)
  ping(): string {
    return 'pong';
  }

  @Mutation(() => String)
  @DistributedLock('/held/<key>')
  take(@Args('key') key: string): string {
    return key;
  }
}

describe('a decorated handler with no waitTimeoutMs stops waiting on every transport', () => {
  const namespace = testNamespace('handler-waits');
  let app: INestApplication;
  let url: string;
  let client: ZkLockClient;
  let other: ZkLockClient;
  let rpc: ClientProxy;
  let socket: WebSocket;
  const waits = new Map<string, { started: number; ended: LockEvents['waited'][] }>();
  const waitsOf = (path: string) => {
    if (!waits.has(path)) waits.set(path, { started: 0, ended: [] });
    return waits.get(path)!;
  };
  const onWaiting = ({ path }: LockEvents['waiting']) => waitsOf(path).started++;
  const onWaited = (event: LockEvents['waited']) => waitsOf(event.path).ended.push(event);

  beforeAll(async () => {
    @Module({
      imports: [
        ZkLockModule.forRoot({
          connectionString: zkConnect(),
          namespace,
          telemetry: false,
          handlerWaitTimeoutMs: HANDLER_WAIT_MS,
          maxWaitersPerPath: 1,
        }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      controllers: [TakeController, TakeHandlers],
      providers: [TakeGateway, TakeResolver],
    })
    class HandlerWaitsModule {}
    app = await NestFactory.create(HandlerWaitsModule, { logger: false });
    app.useWebSocketAdapter(new WsAdapter(app));
    const rpcPort = await freePort();
    app.connectMicroservice({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: rpcPort },
    });
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
    client = app.get<ZkLockClient>(ZK_LOCK_CLIENT);
    client.on('waiting', onWaiting).on('waited', onWaited);

    rpc = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: rpcPort },
    });
    await rpc.connect();
    socket = new WebSocket(url.replace('http', 'ws'));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  });

  afterAll(async () => {
    client?.off('waiting', onWaiting).off('waited', onWaited);
    socket?.close();
    await rpc?.close();
    await other?.close();
    await app?.close();
  });

  /** Each transport's call of its `take` handler on `key`: its error as the client got it. */
  const calls: Record<string, (key: string) => Promise<unknown>> = {
    rpc: (key) =>
      firstValueFrom(rpc.send('take', { key })).then(
        (value: unknown) => ({ answered: value }),
        (error: unknown) => error,
      ),
    ws: async (key) => {
      const reply = await new Promise<{ event: string; data: unknown }>((resolve) => {
        socket.once('message', (raw) => resolve(JSON.parse(String(raw))));
        socket.send(JSON.stringify({ event: 'take', data: { key } }));
      });
      return reply.event === 'exception' ? reply.data : { answered: reply.data };
    },
    graphql: async (key) => {
      const res = await request(url)
        .post('/graphql')
        .send({ query: `mutation { take(key: "${key}") }` });
      return res.body.errors?.[0]?.extensions ?? { answered: res.body.data };
    },
  };

  it.each(Object.keys(calls))(
    '%s: a call on a held lock ends with LOCK_TIMEOUT and gives its place back',
    async (transport) => {
      const path = `/held/${transport}`;
      const held = await other.acquire(path);
      try {
        const error = await settlesWithin(`the ${transport} call`, calls[transport](transport));
        expect(error).toMatchObject({ code: 'LOCK_TIMEOUT', status: 409, lock: path });

        // No wait left: every wait that started has ended, by its deadline.
        const { started, ended } = waitsOf(path);
        expect(started).toBe(1);
        expect(ended.map((e) => e.outcome)).toEqual(['timeout']);
        await waitFor(async () => {
          const { holders, queue } = await client.inspect(path);
          return holders.length === 1 && queue.length === 0;
        }, `no node of ours queued on ${path}`);
        // Its place is free: with maxWaitersPerPath 1, an HTTP request waits, not refused.
        const res = await settlesWithin(
          'the HTTP call',
          request(url).get(`/take/${transport}`).then(),
        );
        expect(res.body).toMatchObject({ statusCode: 409, code: 'LOCK_TIMEOUT', lock: path });
      } finally {
        await held.release();
      }
    },
  );
});
