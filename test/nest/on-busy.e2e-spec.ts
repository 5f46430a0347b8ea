/**
 * `onBusy: 'skip'` and `minHoldMs` on a real ZooKeeper. A busy lock skips the
 * method (undefined, an empty Observable, 200 on HTTP) and emits `skipped`; a lock error inside
 * the method is not a skip; `minHoldMs` keeps the lock after a fast method, hands the result out
 * at once, and ends with the application.
 */
import { Controller, Injectable, Param, Post } from '@nestjs/common';
import request from 'supertest';
import { Observable, of, toArray, lastValueFrom } from 'rxjs';
import {
  DistributedLock,
  DistributedSemaphore,
  LockEvents,
  LockService,
  LockTimeoutError,
  ZkLockClient,
} from '../../lib';
import {
  createLockApp,
  Gate,
  testNamespace,
  useLockApp,
  waitFor,
  zkConnect,
} from './support/nest-app';

const ran: string[] = [];
let gate = new Gate();

@Injectable()
class Jobs {
  constructor(private readonly locks: LockService) {}

  @DistributedLock('/jobs/<name>', { onBusy: 'skip' })
  async run(name: string): Promise<string> {
    ran.push(name);
    await gate.opened;
    return `done ${name}`;
  }

  @DistributedLock('/jobs/<name>', { onBusy: 'skip' })
  stream(name: string): Observable<string> {
    ran.push(`stream ${name}`);
    return of('a', 'b');
  }

  @DistributedSemaphore('/sem/<name>', { maxLeases: 1, onBusy: 'skip' })
  async render(name: string): Promise<string> {
    ran.push(`render ${name}`);
    await gate.opened;
    return 'rendered';
  }

  @DistributedLock((a: string, b: string) => [`/jobs/${a}`, `/jobs/${b}`], { onBusy: 'skip' })
  async both(a: string, b: string): Promise<string> {
    ran.push(`both ${a} ${b}`);
    return 'both';
  }

  /** Holds /jobs/<name> with 'skip', and inside waits 0 ms for a busy /other lock. */
  @DistributedLock('/jobs/<name>', { onBusy: 'skip' })
  async nested(name: string): Promise<void> {
    ran.push(`nested ${name}`);
    await this.locks.withLock('/other', () => undefined, { waitTimeoutMs: 0 });
  }

  @DistributedLock('/jobs/<name>', { onBusy: 'skip', minHoldMs: 10_000 })
  async quick(name: string): Promise<string> {
    ran.push(`quick ${name}`);
    return 'quick';
  }
}

@Controller('jobs')
class JobsController {
  @Post(':name')
  @DistributedLock('/jobs/<name>', { onBusy: 'skip' })
  async start(@Param('name') name: string) {
    ran.push(`http ${name}`);
    return { ran: name };
  }
}

describe("onBusy: 'skip' and minHoldMs", () => {
  const namespace = testNamespace('on-busy');
  const fixture = useLockApp({ providers: [Jobs], controllers: [JobsController] }, { namespace });
  const skipped: LockEvents['skipped'][] = [];
  let other: ZkLockClient;
  const jobs = () => fixture.app.get(Jobs);

  beforeAll(async () => {
    other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
    fixture.locks.on('skipped', (event) => skipped.push(event));
  });
  beforeEach(() => {
    ran.length = 0;
    skipped.length = 0;
    gate = new Gate();
  });
  afterAll(async () => {
    await other.close();
  });

  it('runs when free; when busy, resolves undefined without running and emits skipped', async () => {
    const first = jobs().run('nightly');
    await waitFor(() => ran.length === 1, 'the first call to hold the lock');
    await expect(jobs().run('nightly')).resolves.toBeUndefined();
    expect(ran).toEqual(['nightly']);
    expect(skipped).toEqual([
      { path: '/jobs/nightly', where: 'Jobs.run', pathTemplate: '/jobs/<name>' },
    ]);
    gate.open();
    await expect(first).resolves.toBe('done nightly');
    await expect(jobs().run('nightly')).resolves.toBe('done nightly'); // free again: runs
  });

  it('skips when another process holds the lock', async () => {
    const held = await other.acquire('/jobs/remote');
    try {
      await expect(jobs().run('remote')).resolves.toBeUndefined();
      expect(ran).toEqual([]);
      expect(skipped).toEqual([
        { path: '/jobs/remote', where: 'Jobs.run', pathTemplate: '/jobs/<name>' },
      ]);
    } finally {
      await held.release();
    }
  });

  it('gives an Observable method an empty Observable when busy', async () => {
    const held = await other.acquire('/jobs/obs');
    try {
      const result = (await jobs().stream('obs')) as unknown as Observable<string>;
      await expect(lastValueFrom(result.pipe(toArray()))).resolves.toEqual([]);
      expect(ran).toEqual([]);
    } finally {
      await held.release();
    }
    const result = (await jobs().stream('obs')) as unknown as Observable<string>;
    await expect(lastValueFrom(result.pipe(toArray()))).resolves.toEqual(['a', 'b']);
  });

  it('skips a semaphore with no free lease, and a multi-path lock with one busy member', async () => {
    gate.open();
    const lease = await other.semaphore('/sem/pdf', { maxLeases: 1 }).acquire();
    const held = await other.acquire('/jobs/y');
    try {
      await expect(jobs().render('pdf')).resolves.toBeUndefined();
      await expect(jobs().both('x', 'y')).resolves.toBeUndefined();
      expect(ran).toEqual([]);
      expect(skipped).toEqual([
        { path: '/sem/pdf', where: 'Jobs.render', pathTemplate: '/sem/<name>' },
        { path: '/jobs/x, /jobs/y', where: 'Jobs.both' },
      ]);
    } finally {
      await Promise.all([lease.release(), held.release()]);
    }
    await expect(jobs().render('pdf')).resolves.toBe('rendered');
    await expect(jobs().both('x', 'y')).resolves.toBe('both');
  });

  it('passes a LockTimeoutError from inside the method through (it ran: no skip)', async () => {
    const held = await other.acquire('/other');
    try {
      await expect(jobs().nested('inner')).rejects.toBeInstanceOf(LockTimeoutError);
      expect(ran).toEqual(['nested inner']);
      expect(skipped).toEqual([]);
    } finally {
      await held.release();
    }
  });

  it('answers 201 with no body on a busy route handler, without running it', async () => {
    const held = await other.acquire('/jobs/web');
    try {
      const res = await request(fixture.app.getHttpServer()).post('/jobs/web').expect(201);
      expect(res.text).toBe('');
      expect(ran).toEqual([]);
      expect(skipped).toEqual([
        { path: '/jobs/web', where: 'JobsController.start', pathTemplate: '/jobs/<name>' },
      ]);
    } finally {
      await held.release();
    }
    await request(fixture.app.getHttpServer()).post('/jobs/web').expect(201, { ran: 'web' });
  });

  it('minHoldMs: hands the result out at once and keeps the lock until it has passed', async () => {
    await expect(jobs().quick('q')).resolves.toBe('quick');
    // Still held after the method returned: the hold is 10 s, the check immediate.
    expect(await other.tryAcquire('/jobs/q')).toBeNull();
    await expect(jobs().quick('q')).resolves.toBeUndefined();
    expect(ran).toEqual(['quick q']);
    await waitFor(async () => {
      const handle = await other.tryAcquire('/jobs/q');
      await handle?.release();
      return handle !== null;
    }, 'the minimum hold to end');
  });
});

@Injectable()
class Long {
  @DistributedLock('/jobs/long', { minHoldMs: 2 ** 31 - 1 })
  async tick() {}
}

describe('minHoldMs and shutdown', () => {
  it('app.close() during a minimum hold frees the lock at once (no timer left behind)', async () => {
    const namespace = testNamespace('on-busy-close');
    const app = await createLockApp({ providers: [Jobs, Long] }, { namespace });
    const other = await ZkLockClient.connect({ connectionString: zkConnect(), namespace });
    let closed = false;
    try {
      const long = app.get(Long);
      await long.tick();
      expect(await other.tryAcquire('/jobs/long')).toBeNull();
      await app.close();
      closed = true;
      const handle = await other.tryAcquire('/jobs/long');
      expect(handle).not.toBeNull();
      await handle!.release();
    } finally {
      await other.close();
      if (!closed) await app.close();
    }
  });
});
