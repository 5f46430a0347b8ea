/**
 * Two Nest applications in separate processes (two ZooKeeper sessions) serve the same
 * @DistributedLock route: no two requests on one path overlap, and each path serves its
 * requests in the order they queued, whichever process took them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ZkLockClient } from '../../lib';
import { AppProcess } from './support/app-process';
import { testNamespace, waitFor, zkConnect } from './support/nest-app';

describe('two applications in two processes contend on one route', () => {
  const namespace = testNamespace('contention');
  const dir = mkdtempSync(join(tmpdir(), 'nest-contention-'));
  const logFile = join(dir, 'critical.log');
  let apps: AppProcess[] = [];
  let observer: ZkLockClient;

  const lines = () => readFileSync(logFile, 'utf8').split('\n').filter(Boolean);

  beforeAll(async () => {
    writeFileSync(logFile, '');
    const env = { ZK_CONNECT: zkConnect(), NAMESPACE: namespace, LOG_FILE: logFile };
    apps = await Promise.all([AppProcess.start(env), AppProcess.start(env)]);
    observer = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await observer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves each path one request at a time, in order of arrival', async () => {
    const paths = ['a', 'b'];
    const responses: Promise<number>[] = [];
    for (const id of paths) {
      // seq 0 holds the lock (gated) in the first app; 1..5 queue alternately in both apps.
      for (let seq = 0; seq < 6; seq++) {
        const app = apps[seq % 2];
        const body = { seq, gated: seq === 0 };
        responses.push(
          request(app.url)
            .post(`/jobs/${id}`)
            .send(body)
            .then((res) => res.status),
        );
        if (seq === 0) {
          await waitFor(() => lines().includes(`enter ${id} 0 ${app.pid}`), `${id}#0 to hold`);
        } else {
          await waitFor(
            async () => (await observer.inspect(`/jobs/${id}`)).queue.length === seq,
            `${id}#${seq} to queue`,
          );
        }
      }
      const queue = (await observer.inspect(`/jobs/${id}`)).queue;
      expect(queue.map((node) => node.data.pid)).toEqual([1, 0, 1, 0, 1].map((i) => apps[i].pid));
    }
    for (const id of paths) await request(apps[0].url).post(`/gates/job:${id}`).expect(204);
    expect(await Promise.all(responses)).toEqual(Array(12).fill(201));

    for (const id of paths) {
      const events = lines()
        .map((line) => line.split(' '))
        .filter(([, path]) => path === id)
        .map(([kind, , seq, pid]) => ({ kind, seq: Number(seq), pid: Number(pid) }));
      // No overlap: every enter is followed by the exit of the same request.
      expect(events.map((e) => e.kind)).toEqual(Array(6).fill(['enter', 'exit']).flat());
      for (let i = 0; i < events.length; i += 2) expect(events[i + 1].seq).toBe(events[i].seq);
      // Order of arrival, alternating between the two processes.
      const entered = events.filter((e) => e.kind === 'enter');
      expect(entered.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(entered.map((e) => e.pid)).toEqual([0, 1, 0, 1, 0, 1].map((i) => apps[i].pid));
    }
  });

  it('frees held locks on SIGTERM (enableShutdownHooks): another session acquires at once', async () => {
    const [first] = apps;
    await request(first.url).post('/reports/monthly').expect(202);
    expect(await observer.tryAcquire('/reports/monthly')).toBeNull();

    await first.stop('SIGTERM');

    const handle = await observer.tryAcquire('/reports/monthly');
    expect(handle).not.toBeNull();
    await handle!.release();
  });
});
