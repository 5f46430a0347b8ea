/**
 * A lock error on a GraphQL resolver, with the real Apollo driver, answers the same body whatever
 * NODE_ENV is: `message`, `locations`, `path` and `extensions { code, status, lock? }`, and never
 * the core error's stack (Apollo adds `extensions.stacktrace` when NODE_ENV is neither
 * 'production' nor 'test'), the ZooKeeper address or the resolver's name. Apollo reads NODE_ENV
 * when the server is built, so each app is built with the value under test. The busy lock is held
 * by another ZooKeeper session.
 */
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { CanActivate, INestApplication, Injectable, Module, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Args, GraphQLModule, Mutation, Query, Resolver } from '@nestjs/graphql';
import request from 'supertest';
import {
  DistributedLock,
  LockHandle,
  LockService,
  ZkLockClient,
  ZkLockModule,
  ZooKeeperUnavailableError,
} from '../../lib';
import { testNamespace, zkConnect } from './support/nest-app';

const ADDRESS = '127.0.0.1:28185';

/** Takes the lock itself, through LockService, before the resolver runs (the filter's path). */
@Injectable()
class BusyGuard implements CanActivate {
  constructor(private readonly locks: LockService) {}
  canActivate(): Promise<boolean> {
    return this.locks.withLock('/held/guarded', () => true, { waitTimeoutMs: 0 });
  }
}

@Resolver()
class SecretResolver {
  @Query(() => String)
  ping(): string {
    return 'pong';
  }

  @Mutation(() => String)
  @DistributedLock('/held/<key>', { waitTimeoutMs: 0 })
  takeTheHeldKey(@Args('key') key: string): string {
    return key;
  }

  /** What the engine throws when ZooKeeper does not answer: its message names the servers. */
  @Mutation(() => String)
  askAnUnansweringZooKeeper(): string {
    throw new ZooKeeperUnavailableError(ADDRESS, 10_000, 'a session request');
  }

  @Mutation(() => String)
  @UseGuards(BusyGuard)
  passTheBusyGuard(): string {
    return 'in';
  }
}

async function startApp(namespace: string, nodeEnv: string | undefined): Promise<INestApplication> {
  const saved = process.env.NODE_ENV;
  if (nodeEnv === undefined) delete process.env.NODE_ENV;
  else process.env.NODE_ENV = nodeEnv;
  try {
    @Module({
      imports: [
        ZkLockModule.forRoot({ connectionString: zkConnect(), namespace, telemetry: false }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      providers: [SecretResolver, BusyGuard],
    })
    class GraphQLErrorsModule {}
    const app = await NestFactory.create(GraphQLErrorsModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    return app;
  } finally {
    if (saved === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = saved;
  }
}

describe('lock errors over GraphQL (Apollo): one body whatever NODE_ENV', () => {
  const namespace = testNamespace('graphql-errors');
  let other: ZkLockClient;
  const held: LockHandle[] = [];
  const apps: INestApplication[] = [];

  const ask = async (app: INestApplication, query: string) => {
    const res = await request(await app.getUrl())
      .post('/graphql')
      .send({ query });
    return { text: res.text, error: res.body.errors?.[0] as Record<string, unknown> };
  };

  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
    for (const path of ['/held/k', '/held/guarded']) held.push(await other.acquire(path));
    for (const env of [undefined, 'development', 'production']) {
      apps.push(await startApp(namespace, env));
    }
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await Promise.all(held.map((lock) => lock.release()));
    await other?.close();
  });

  const cases = [
    {
      name: 'a busy lock on the resolver (409)',
      query: 'mutation { takeTheHeldKey(key: "k") }',
      extensions: { code: 'LOCK_TIMEOUT', status: 409, lock: '/held/k' },
    },
    {
      name: 'ZooKeeper not answering (503)',
      query: 'mutation { askAnUnansweringZooKeeper }',
      extensions: { code: 'ZOOKEEPER_UNAVAILABLE', status: 503 },
    },
    {
      name: 'a busy lock taken by a guard (409)',
      query: 'mutation { passTheBusyGuard }',
      extensions: { code: 'LOCK_TIMEOUT', status: 409, lock: '/held/guarded' },
    },
  ];

  it.each(cases)(
    '$name: no stack, address or resolver name; one body with NODE_ENV unset, development, production',
    async (c) => {
      const answers = [];
      for (const app of apps) answers.push(await ask(app, c.query));
      for (const { text, error } of answers) {
        expect(error).toEqual({
          message: expect.any(String),
          locations: expect.any(Array),
          path: [expect.any(String)],
          extensions: c.extensions,
        });
        expect(text).not.toMatch(/stacktrace|127\.0\.0\.1|28185|Resolver|\.ts:|node_modules|at /);
      }
      expect(answers[1].text).toBe(answers[0].text);
      expect(answers[2].text).toBe(answers[0].text);
    },
  );
});
