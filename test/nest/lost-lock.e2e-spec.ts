import { Controller, INestApplication, Logger, Param, Post } from '@nestjs/common';
import { hostname } from 'node:os';
import request from 'supertest';
import { DistributedLock, LockEvents, LockService } from '../../lib';
import { Gate, createLockApp, testNamespace, waitFor, zkConnect } from './support/nest-app';
import { vi } from 'vitest';
import { ZkAdmin } from '../core/support/zk-admin';

/** The handler's, reset by each describe block (each its own app). */
let gate = new Gate();
let entered = false;

@Controller('jobs')
class JobsController {
  @Post(':id')
  @DistributedLock('/jobs/<id>')
  async run(@Param('id') id: string) {
    entered = true;
    await gate.opened;
    return `finished ${id}`;
  }
}

async function removeNode(path: string): Promise<void> {
  const admin = await ZkAdmin.connect(zkConnect());
  try {
    await admin.remove(path);
  } finally {
    admin.close();
  }
}

describe('a lock lost while the handler runs', () => {
  const namespace = testNamespace('lost-lock');
  let app: INestApplication;
  const errors: string[] = [];

  beforeAll(async () => {
    app = await createLockApp(
      { controllers: [JobsController] },
      { namespace, nodeData: { app: 'jobs' } },
    );
    vi.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      errors.push(String(message));
    });
  });

  afterAll(async () => {
    gate.open();
    vi.restoreAllMocks();
    await app.close();
  });

  it('lets an operator see the holder, then answers 503 and logs when the node is deleted', async () => {
    const locks = app.get(LockService);
    const lost: LockEvents['lost'][] = [];
    locks.on('lost', (event) => lost.push(event));
    const response = request(app.getHttpServer())
      .post('/jobs/7')
      .then((res) => res);
    await waitFor(() => entered, 'the handler to hold the lock');

    const inspection = await locks.inspect('/jobs/7');
    expect(inspection.queue).toEqual([]);
    // The client's one session (the default) holds it.
    const session = locks.client.sessions[0];
    expect(inspection.holder?.sessionId).toBe(session.id);
    expect(inspection.holder?.data).toMatchObject({
      host: hostname(),
      pid: process.pid,
      app: 'jobs',
    });

    await removeNode(`${namespace}/jobs/7/${inspection.holder!.name}`);
    const res = await response;
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ statusCode: 503, code: 'LOCK_LOST', lock: '/jobs/7' });
    expect(lost.map((e) => e.path)).toEqual(['/jobs/7']);
    expect(errors.some((m) => m.includes('JobsController.run lost lock "/jobs/7"'))).toBe(true);
    // Logged as it was lost: not again when answered.
    expect(errors.filter((m) => m.startsWith('LOCK_LOST'))).toEqual([]);
  });
});

// The module's event logger listens for 'lost' on the client, and a client with a 'lost' listener
// watches every holder's node from its grant. Without one, the decorator's hold alone, by reading
// the lock's signal, has the node watched.
describe('a lock lost while the handler runs, nobody listening for lost locks', () => {
  const namespace = testNamespace('lost-lock-unobserved');
  let app: INestApplication;

  beforeAll(async () => {
    gate = new Gate();
    entered = false;
    app = await createLockApp({ controllers: [JobsController] }, { namespace });
  });

  afterAll(async () => {
    gate.open();
    await app.close();
  });

  it('answers 503 LOCK_LOST when the node is deleted', async () => {
    const locks = app.get(LockService);
    locks.client.removeAllListeners('lost');
    expect(locks.client.listenerCount('lost')).toBe(0);
    const response = request(app.getHttpServer())
      .post('/jobs/8')
      .then((res) => res);
    await waitFor(() => entered, 'the handler to hold the lock');
    const { holder } = await locks.inspect('/jobs/8');

    await removeNode(`${namespace}/jobs/8/${holder!.name}`);
    const res = await response;
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ statusCode: 503, code: 'LOCK_LOST', lock: '/jobs/8' });
  });
});

@Controller('manual')
class ManualController {
  constructor(private readonly locks: LockService) {}

  /** Checks its lock after releasing it: a LockLostError no 'lost' event told (reason 'released'). */
  @Post(':id')
  async afterRelease(@Param('id') id: string): Promise<void> {
    const handle = await this.locks.acquire(`/manual/${id}`);
    await handle.release();
    handle.assertHeld();
  }
}

describe('a LockLostError that no lost event told, answered by a handler', () => {
  const namespace = testNamespace('lost-lock-untold');
  let app: INestApplication;
  const lines: { level: string; message: string }[] = [];

  beforeAll(async () => {
    app = await createLockApp({ controllers: [ManualController] }, { namespace });
    for (const level of ['error', 'warn'] as const) {
      vi.spyOn(Logger.prototype, level).mockImplementation((message: unknown) => {
        lines.push({ level, message: String(message) });
      });
    }
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await app.close();
  });

  it('answers 503 LOCK_LOST and logs it once, naming the path and what to do', async () => {
    const res = await request(app.getHttpServer()).post('/manual/1');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ statusCode: 503, code: 'LOCK_LOST', lock: '/manual/1' });
    const logged = lines.filter((l) => l.message.includes('"/manual/1"'));
    expect(logged).toEqual([
      {
        level: 'error',
        message: expect.stringContaining('LOCK_LOST (503): Lost lock "/manual/1" (released)'),
      },
    ]);
    expect(logged[0].message).toContain('retry the whole operation');
  });
});
