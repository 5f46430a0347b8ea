/**
 * `@DistributedLock` on GraphQL resolvers (Apollo driver, code-first), three
 * instances in their own processes: mutations on one product run one at a time, a query takes
 * one lock per resolver call (not per field), and a busy lock is a GraphQL error with
 * `extensions.code: 'LOCK_TIMEOUT'`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { AppProcess } from './support/app-process';
import { testNamespace, zkConnect } from './support/nest-app';
import { scaled } from '../support/time-scale';

const MUTATIONS = 45;

describe('@DistributedLock on GraphQL resolvers, 3 instances', () => {
  const namespace = testNamespace('graphql');
  const dir = mkdtempSync(join(tmpdir(), 'nest-gql-'));
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    const env = { ZK_CONNECT: zkConnect(), NAMESPACE: namespace, DIR: dir };
    apps = await Promise.all([0, 1, 2].map(() => AppProcess.start(env, 'graphql.app.ts')));
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const gql = (i: number, query: string) =>
    request(apps[i % 3].url)
      .post('/graphql')
      .send({ query })
      .then((res) => res.body);

  it('runs mutations on one product one at a time across the instances', async () => {
    const answers = await Promise.all(
      Array.from({ length: MUTATIONS }, (_, i) => gql(i, 'mutation { deduct(productId: "fig") }')),
    );
    expect(answers.filter((a) => a.errors)).toEqual([]);
    const file = join(dir, 'gql-fig');
    expect(existsSync(file) && Number(readFileSync(file, 'utf8'))).toBe(MUTATIONS);
    const sections = readFileSync(`${file}.log`, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ').map(BigInt))
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    for (let i = 1; i < sections.length; i++)
      expect(sections[i][0] >= sections[i - 1][1]).toBe(true);
  });

  it('takes one lock per resolver call, not per field', async () => {
    const before = (await gql(0, '{ locksTaken }')).data.locksTaken as number;
    const answer = await gql(0, '{ stock(productId: "fig") { id sold holder } }');
    expect(answer.data.stock).toEqual({ id: 'fig', sold: MUTATIONS, holder: true });
    expect((await gql(0, '{ locksTaken }')).data.locksTaken).toBe(before + 1);
  });

  it('answers a busy lock with a GraphQL error whose extensions.code is LOCK_TIMEOUT', async () => {
    const holding = gql(0, `mutation { hold: holdFirst(key: "g", ms: ${scaled(5_000)}) }`);
    let error: { message: string; extensions: { code: string; status: number } } | undefined;
    for (let attempt = 0; attempt < 100 && !error; attempt++) {
      error = (await gql(1, 'mutation { hold(key: "g", ms: 0) }')).errors?.[0];
    }
    expect(error?.extensions).toMatchObject({ code: 'LOCK_TIMEOUT', status: 409 });
    expect(error?.extensions).toMatchObject({ lock: '/held/g' });
    expect((await holding).data).toEqual({ hold: 'g' });
  });

  it('answers the same when a plain resolver calls a locked service', async () => {
    const holding = gql(0, `mutation { hold: holdFirst(key: "q", ms: ${scaled(5_000)}) }`);
    let error: { extensions: { code: string; status: number } } | undefined;
    for (let attempt = 0; attempt < 100 && !error; attempt++) {
      error = (await gql(1, 'mutation { holdPlain(key: "q", ms: 0) }')).errors?.[0];
    }
    expect(error?.extensions).toMatchObject({ code: 'LOCK_TIMEOUT', status: 409, lock: '/held/q' });
    expect((await holding).data).toEqual({ hold: 'q' });
  });
});
